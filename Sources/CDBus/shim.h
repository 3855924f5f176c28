#ifndef CDBUS_SHIM_H
#define CDBUS_SHIM_H

#include <dbus/dbus.h>

// Swift cannot import DBUS_TYPE_* (they are defined as `((int) 'y')`) or
// TRUE/FALSE, so the wrapper in Sources/DBus/LibDBus/ spells type codes as ASCII
// bytes and booleans as 0/1. Nothing else needs re-exporting here.

#endif
