"""Prints every PropertiesChanged, Seeked and TrackList signal of an MPRIS
player, one line each, after printing READY once subscribed:

  changed <interface short name> Name=value,Name=value [invalidated Name,…]
  seeked <position µs>
  trackadded <trackid> <title> after <AfterTrack>
  trackremoved <TrackId>
  trackmetadatachanged <TrackId> <new trackid> <title>
  tracklistreplaced <id>,<id>,… current <CurrentTrack>

Track ids print without the `/org/mprisbridge/Track/` prefix.

Values print as in mpris_client.py (booleans true/false, metadata as its track id).
Usage: watch_player.py BUS_NAME"""
import sys
import dbus
import dbus.mainloop.glib
from gi.repository import GLib

SHORT = {"org.mpris.MediaPlayer2": "root", "org.mpris.MediaPlayer2.Player": "player",
         "org.mprisbridge.Player1": "ext", "org.mpris.MediaPlayer2.TrackList": "tracks"}
PREFIX = "/org/mprisbridge/Track/"


def short_id(track_id):
    return str(track_id)[len(PREFIX):] if str(track_id).startswith(PREFIX) else str(track_id)


def show(name, value):
    if name == "Metadata":
        return str(value.get("mpris:trackid", "-"))
    if isinstance(value, dbus.Boolean):
        return "true" if value else "false"
    if isinstance(value, dbus.Double):
        return repr(float(value))
    if isinstance(value, dbus.Array):
        return "[" + ",".join(str(v) for v in value) + "]"
    return str(value)


def changed(interface, values, invalidated, path=None):
    if path != "/org/mpris/MediaPlayer2":
        return
    parts = ["changed", SHORT.get(interface, interface)]
    if values:
        parts.append(",".join(name + "=" + show(name, values[name]) for name in sorted(values)))
    if invalidated:
        parts += ["invalidated", ",".join(sorted(invalidated))]
    line = " ".join(parts)
    print(line, flush=True)


def seeked(position, path=None):
    if path == "/org/mpris/MediaPlayer2":
        print("seeked " + str(int(position)), flush=True)


def on_path(handler):
    """The handler, called only for signals from the MPRIS object."""
    def filtered(*args, path=None):
        if path == "/org/mpris/MediaPlayer2":
            print(handler(*args), flush=True)
    return filtered


def title(metadata):
    return str(metadata.get("xesam:title", "-")).replace(" ", "_")


TRACKLIST_SIGNALS = {
    "TrackAdded": lambda metadata, after: "trackadded %s %s after %s" % (
        short_id(metadata["mpris:trackid"]), title(metadata), short_id(after)),
    "TrackRemoved": lambda track_id: "trackremoved " + short_id(track_id),
    "TrackMetadataChanged": lambda track_id, metadata: "trackmetadatachanged %s %s %s" % (
        short_id(track_id), short_id(metadata["mpris:trackid"]), title(metadata)),
    "TrackListReplaced": lambda tracks, current: "tracklistreplaced %s current %s" % (
        ",".join(short_id(t) for t in tracks), short_id(current)),
}


dbus.mainloop.glib.DBusGMainLoop(set_as_default=True)
bus = dbus.SessionBus()
owner = bus.get_name_owner(sys.argv[1])
bus.add_signal_receiver(changed, "PropertiesChanged", "org.freedesktop.DBus.Properties", owner, path_keyword="path")
bus.add_signal_receiver(seeked, "Seeked", "org.mpris.MediaPlayer2.Player", owner, path_keyword="path")
for member, describe in TRACKLIST_SIGNALS.items():
    bus.add_signal_receiver(on_path(describe), member, "org.mpris.MediaPlayer2.TrackList", owner, path_keyword="path")
# A round trip to the daemon after AddMatch guarantees the matches are active.
bus.get_name_owner("org.freedesktop.DBus")
print("READY", flush=True)
GLib.MainLoop().run()
