"""Prints every signal a sender emits from a path, one line each, until the
`Done` signal: `READY` once subscribed, then for PropertiesChanged
`PropertiesChanged <interface> <changed as JSON> <value signatures> <invalidated>`
and for others `<member> <arguments as JSON>`.
Usage: watch_signals.py BUS_NAME PATH"""
import sys
import dbus
import dbus.mainloop.glib
from gi.repository import GLib
from dbus_types import line, plain, signature

dbus.mainloop.glib.DBusGMainLoop(set_as_default=True)
loop = GLib.MainLoop()
bus = dbus.SessionBus()
sender, path = sys.argv[1], sys.argv[2]


def received(*args, **keywords):
    member = keywords["member"]
    if member == "PropertiesChanged":
        interface, changed, invalidated = args
        types = {str(k): signature(v)[1:] for k, v in changed.items()}
        print(line("PropertiesChanged", str(interface), plain(changed), types, plain(invalidated)), flush=True)
    else:
        print(line(member, plain(list(args))), flush=True)
    if member == "Done":
        loop.quit()


bus.add_signal_receiver(received, bus_name=sender, path=path, member_keyword="member")
# A round trip to the bus after AddMatch: once it answers, the match is in place.
bus.get_object("org.freedesktop.DBus", "/org/freedesktop/DBus").GetId(dbus_interface="org.freedesktop.DBus")
print("READY", flush=True)
GLib.timeout_add_seconds(20, lambda: (print("TIMEOUT", flush=True), loop.quit()))
loop.run()
