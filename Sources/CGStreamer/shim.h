#ifndef CGSTREAMER_SHIM_H
#define CGSTREAMER_SHIM_H

// GStreamer core and the plugins-base utilities (the discoverer). Swift
// cannot import GLib's variadic functions or GStreamer's function-like
// macros, so the static inline functions below stand in for the few that
// Sources/GStreamerPlayback needs.
#include <gst/gst.h>
#include <gst/pbutils/pbutils.h>

#endif
