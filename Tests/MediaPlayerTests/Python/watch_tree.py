"""Prints the signals of a MediaServer2 tree, one line each, after READY once subscribed:

  updated <path relative to the root, "" for the root>
  changed <relative path> <interface short name> Name=value,…

Usage: watch_tree.py BUS_NAME ROOT_PATH"""
import sys
import dbus
import dbus.mainloop.glib
from gi.repository import GLib

SHORT = {"org.mprisbridge.MediaNode1": "node", "org.mprisbridge.MediaRoot1": "root"}
dbus.mainloop.glib.DBusGMainLoop(set_as_default=True)
bus = dbus.SessionBus()
bus_name, root = sys.argv[1], sys.argv[2]


def relative(path):
    return "" if path == root else str(path)[len(root) + 1:]


def show(value):
    if isinstance(value, dbus.Boolean):
        return "true" if value else "false"
    return str(value)


def on_updated(path=None):
    print("updated " + relative(path), flush=True)


def on_changed(interface, changed, invalidated, path=None):
    values = ",".join("%s=%s" % (k, show(v)) for k, v in sorted(changed.items()))
    print("changed %s %s %s" % (relative(path), SHORT.get(interface, interface), values), flush=True)


owner = bus.get_name_owner(bus_name)
bus.add_signal_receiver(on_updated, signal_name="Updated", dbus_interface="org.gnome.UPnP.MediaContainer2",
                        sender_keyword=None, path_keyword="path", bus_name=owner)
bus.add_signal_receiver(on_changed, signal_name="PropertiesChanged", dbus_interface="org.freedesktop.DBus.Properties",
                        path_keyword="path", bus_name=owner)
# A round trip to the bus daemon, so both match rules are in place before READY.
bus.get_name_owner(bus_name)
print("READY", flush=True)
GLib.MainLoop().run()
