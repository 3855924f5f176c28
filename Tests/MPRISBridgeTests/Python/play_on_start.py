"""Sends Player.Play the moment a bus name gets an owner, as a media key that started the player
through D-Bus activation does.

Usage: play_on_start.py BUS_NAME
Prints `watching` once subscribed; when BUS_NAME is owned, calls Play on it and prints `played`
(or `error NAME: message`), then exits. Exit status 1 after 20 s without an owner.
"""

import sys

import dbus
import dbus.mainloop.glib
from gi.repository import GLib

name = sys.argv[1]
dbus.mainloop.glib.DBusGMainLoop(set_as_default=True)
bus = dbus.SessionBus()
loop = GLib.MainLoop()
status = [1]


def owner_changed(changed, old, new):
    if changed != name or not new:
        return
    player = dbus.Interface(bus.get_object(name, "/org/mpris/MediaPlayer2", introspect=False),
                            "org.mpris.MediaPlayer2.Player")
    try:
        player.Play()
        print("played", flush=True)
    except dbus.DBusException as error:
        print(f"error {error.get_dbus_name()}: {error.get_dbus_message()}", flush=True)
    status[0] = 0
    loop.quit()


bus.add_signal_receiver(owner_changed, "NameOwnerChanged", "org.freedesktop.DBus", arg0=name)
# A round trip, so the match rule is in place before anyone is told to start the player.
bus.get_name_owner("org.freedesktop.DBus")
print("watching", flush=True)
GLib.timeout_add_seconds(20, loop.quit)
loop.run()
sys.exit(status[0])
