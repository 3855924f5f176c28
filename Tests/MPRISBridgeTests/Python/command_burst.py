"""Bursts of commands from several clients of the mpris-bridge daemon at once, for the tests.

Usage: command_burst.py BUS_NAME CLIENTS URI
Each client is a connection of its own and sends its commands back to back, without waiting
for replies; every client sends the same sequence, so whichever runs last, the last command
is the sequence's last. Prints one line per burst:
  PHASE replies=OUTCOME:COUNT,… status=PlaybackStatus current=POSITION
POSITION is the current entry's place in the TrackList's first reading (or "new" for an entry
added since); OUTCOME is ok or the error's name. After the mixed burst, `entries inserted=N
appended=M`: the entries AddTrack put after the 20th and after the last (the TrackList shows the
5 entries before the current one and the 50 after).
"""
import collections
import os
import sys

import dbus
import dbus.mainloop.glib
from gi.repository import GLib

dbus.mainloop.glib.DBusGMainLoop(set_as_default=True)
NAME, CLIENTS, URI = sys.argv[1], int(sys.argv[2]), sys.argv[3]
PATH = "/org/mpris/MediaPlayer2"
NO_TRACK = dbus.ObjectPath("/org/mpris/MediaPlayer2/TrackList/NoTrack")
# Kept: a connection dropped loses its replies.
connections = [dbus.bus.BusConnection(os.environ["DBUS_SESSION_BUS_ADDRESS"]) for _ in range(CLIENTS)]
properties = dbus.Interface(connections[0].get_object(NAME, PATH, introspect=False), "org.freedesktop.DBus.Properties")


def get(name, interface="org.mpris.MediaPlayer2.Player"):
    return properties.Get(interface, name)


def tracks():
    return [str(track) for track in get("Tracks", "org.mpris.MediaPlayer2.TrackList")]


first = tracks()


def report(phase, outcomes):
    replies = ",".join("%s:%d" % pair for pair in sorted(outcomes.items()))
    current = str(get("Metadata").get("mpris:trackid", ""))
    position = first.index(current) if current in first else "new"
    print("%s replies=%s status=%s current=%s" % (phase, replies, get("PlaybackStatus"), position), flush=True)


def burst(phase, sequence, clients=CLIENTS):
    loop = GLib.MainLoop()
    outcomes = collections.Counter()
    pending = [0]
    for bus in connections[:clients]:
        player = bus.get_object(NAME, PATH, introspect=False)
        for send in sequence:
            pending[0] += 1

            def answered(outcome):
                outcomes[outcome] += 1
                pending[0] -= 1
                if pending[0] == 0:
                    loop.quit()
            send(player, lambda *values, answered=answered: answered("ok"),
                 lambda error, answered=answered: answered(error.get_dbus_name()))
    loop.run()
    report(phase, outcomes)


def transport(method):
    return lambda player, ok, failed: player.get_dbus_method(method, "org.mpris.MediaPlayer2.Player")(
        reply_handler=ok, error_handler=failed, timeout=120)


def go_to(position):
    return lambda player, ok, failed: player.get_dbus_method("GoTo", "org.mpris.MediaPlayer2.TrackList")(
        dbus.ObjectPath(first[position]), reply_handler=ok, error_handler=failed, timeout=120)


def add(playing):
    # Played: after the 20th entry, so that a Next after it has somewhere to go; else at the end.
    after = dbus.ObjectPath(first[19] if playing else first[-1])
    return lambda player, ok, failed: player.get_dbus_method("AddTrack", "org.mpris.MediaPlayer2.TrackList")(
        URI, after, playing, reply_handler=ok, error_handler=failed, timeout=120)


play_pause, next_track = transport("PlayPause"), transport("Next")
report("start", collections.Counter())
burst("mixed", [play_pause, next_track, add(False), go_to(10), next_track, play_pause, add(True), play_pause,
                next_track, go_to(20)])
burst("even-play-pause", [play_pause] * 4)
burst("odd-play-pause", [play_pause], clients=CLIENTS - 1 if CLIENTS % 2 == 0 else CLIENTS)
shown = tracks()
print("entries inserted=%d appended=%d" % (shown.index(first[20]) - shown.index(first[19]) - 1,
                                          len(shown) - shown.index(first[-1]) - 1), flush=True)
burst("next", [next_track] * 3)
