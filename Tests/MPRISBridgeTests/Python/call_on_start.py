"""Calls the player the moment its bus name gets an owner, as a shell that lists players does,
at every start of the player.

Usage: call_on_start.py BUS_NAME
Prints `watching` once subscribed. Each time BUS_NAME gets an owner, sends at once, without
waiting between them, Properties.GetAll(Player), Properties.Get(PlaybackStatus),
Properties.Get(root Identity), Player.Stop (a command: answered once the saved queue is back),
Introspectable.Introspect and Peer.Ping to it, then prints one line once all are answered:
`start N ok MS` (MS: milliseconds from the signal to the last reply) or
`start N error WHAT: NAME: message` for the first answer that is not the right one.
Runs until killed.
"""

import sys
import time

import dbus
import dbus.mainloop.glib
from gi.repository import GLib

name = sys.argv[1]
path = "/org/mpris/MediaPlayer2"
dbus.mainloop.glib.DBusGMainLoop(set_as_default=True)
bus = dbus.SessionBus()
loop = GLib.MainLoop()
starts = [0]


def check_get_all(reply):
    if "PlaybackStatus" not in reply or "CanPlay" not in reply:
        return f"GetAll(Player) lacks PlaybackStatus or CanPlay: {sorted(reply)}"


def check_status(reply):
    if reply not in ("Playing", "Paused", "Stopped"):
        return f"PlaybackStatus {reply!r}"


def check_identity(reply):
    if reply != "mpris-bridge":
        return f"Identity {reply!r}"


def check_introspection(reply):
    if "org.mpris.MediaPlayer2.Player" not in reply:
        return "Introspect does not list org.mpris.MediaPlayer2.Player"


def check_nothing(_):
    return None


calls = [
    ("GetAll", "org.freedesktop.DBus.Properties", "GetAll", "s", ("org.mpris.MediaPlayer2.Player",), check_get_all),
    ("Get(PlaybackStatus)", "org.freedesktop.DBus.Properties", "Get", "ss",
     ("org.mpris.MediaPlayer2.Player", "PlaybackStatus"), check_status),
    ("Get(Identity)", "org.freedesktop.DBus.Properties", "Get", "ss", ("org.mpris.MediaPlayer2", "Identity"),
     check_identity),
    ("Stop", "org.mpris.MediaPlayer2.Player", "Stop", "", (), check_nothing),
    ("Introspect", "org.freedesktop.DBus.Introspectable", "Introspect", "", (), check_introspection),
    ("Ping", "org.freedesktop.DBus.Peer", "Ping", "", (), check_nothing),
]


def owner_changed(changed, old, new):
    if changed != name or not new:
        return
    starts[0] += 1
    start = starts[0]
    sent = time.monotonic()
    state = {"left": len(calls), "failure": None}

    def finish(failure):
        if failure and not state["failure"]:
            state["failure"] = failure
        state["left"] -= 1
        if state["left"] == 0:
            if state["failure"]:
                print(f"start {start} error {state['failure']}", flush=True)
            else:
                print(f"start {start} ok {(time.monotonic() - sent) * 1000:.1f}", flush=True)

    for what, interface, member, signature, arguments, check in calls:
        def replied(*reply, what=what, check=check):
            problem = check(reply[0] if reply else None)
            finish(f"{what}: {problem}" if problem else None)

        def failed(error, what=what):
            finish(f"{what}: {error.get_dbus_name()}: {error.get_dbus_message()}")

        bus.call_async(name, path, interface, member, signature, arguments, replied, failed, timeout=20)


bus.add_signal_receiver(owner_changed, "NameOwnerChanged", "org.freedesktop.DBus", arg0=name)
# A round trip, so the match rule is in place before anyone is told to start the player.
bus.get_name_owner("org.freedesktop.DBus")
print("watching", flush=True)
loop.run()
