"""Prints every PropertiesChanged of an MPRIS player's object, one line each, after printing
READY once subscribed:

  changed <interface short name> Name=value,Name=value

Booleans print as true/false, doubles with repr, arrays as [a,b].
Usage: watch_properties.py BUS_NAME"""
import sys
import dbus
import dbus.mainloop.glib
from gi.repository import GLib

SHORT = {"org.mpris.MediaPlayer2": "root", "org.mpris.MediaPlayer2.Player": "player",
         "org.mprisbridge.Player1": "ext"}


def show(name, value):
    if name == "Metadata":
        return str(value.get("mpris:trackid", "-"))
    if isinstance(value, dbus.Boolean):
        return "true" if value else "false"
    if isinstance(value, dbus.Double):
        return repr(float(value))
    if isinstance(value, dbus.Array):
        return "[" + ",".join(show("", v) for v in value) + "]"
    return str(value)


def changed(interface, values, invalidated, path=None):
    if path == "/org/mpris/MediaPlayer2" and values:
        names = ",".join(name + "=" + show(name, values[name]) for name in sorted(values))
        print("changed " + SHORT.get(interface, interface) + " " + names, flush=True)


dbus.mainloop.glib.DBusGMainLoop(set_as_default=True)
bus = dbus.SessionBus()
owner = bus.get_name_owner(sys.argv[1])
bus.add_signal_receiver(changed, "PropertiesChanged", "org.freedesktop.DBus.Properties", owner, path_keyword="path")
# A round trip to the daemon after AddMatch guarantees the match is active.
bus.get_name_owner("org.freedesktop.DBus")
print("READY", flush=True)
GLib.MainLoop().run()
