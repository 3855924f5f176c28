#ifndef CGLIB_SHIM_H
#define CGLIB_SHIM_H

// GLib's checksums, for the content-addressed names of cached images
// (Sources/Digest only). GLib is already loaded in the daemon through
// GStreamer, so this costs no library of its own.
#include <glib.h>

#endif
