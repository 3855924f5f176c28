"""A python3-dbus client of the mpris-bridge daemon for the tests.

Usage: bridge_client.py BUS_NAME OPERATION...   (one output line per operation)
  get IFACE PROP            the value
  set IFACE PROP T:V        `ok`, or `error NAME: message`
  call IFACE METHOD [T:V…]  `ok [result]`, or `error NAME: message`
  tracks                    the TrackList's track ids, space-separated
  titles                    the title of every track in the TrackList, in order, joined by |
  current                   the current track's id and title: `ID TITLE`
  playlists                 each playlist of GetPlaylists (ordered by name) as `ID NAME`, joined by |
IFACE is root, player, tracklist, playlists or bridge (org.mprisbridge.Player1); T:V is a typed value: s:text
(%20 for a space), o:/path, b:true, x:5, u:5, d:0.5.

Usage: bridge_client.py BUS_NAME watch
  prints READY once subscribed, then one line per signal:
  changed player Name=value,…         (Metadata shows as its xesam:title)
  changed bridge Name=value,…         (org.mprisbridge.Player1)
  seeked <µs>
  added <id> after <id> | removed <id> | replaced <n> current <id> | metadata <id> <title>
"""
import sys
import dbus

IFACES = {"root": "org.mpris.MediaPlayer2", "player": "org.mpris.MediaPlayer2.Player",
          "tracklist": "org.mpris.MediaPlayer2.TrackList", "playlists": "org.mpris.MediaPlayer2.Playlists",
          "bridge": "org.mprisbridge.Player1"}
PATH = "/org/mpris/MediaPlayer2"


def typed(text):
    kind, _, raw = text.partition(":")
    raw = raw.replace("%20", " ")
    return {"s": lambda: dbus.String(raw), "o": lambda: dbus.ObjectPath(raw), "b": lambda: dbus.Boolean(raw == "true"),
            "x": lambda: dbus.Int64(int(raw)), "u": lambda: dbus.UInt32(int(raw)),
            "d": lambda: dbus.Double(float(raw))}[kind]()


def show(value):
    if isinstance(value, dbus.Boolean):
        return "true" if value else "false"
    if isinstance(value, dbus.Dictionary) and "mpris:trackid" in value:
        return str(value.get("xesam:title", "-"))
    if isinstance(value, dbus.Double):
        return repr(float(value))
    if isinstance(value, (dbus.Array, list)):
        return "[" + ",".join(show(v) for v in value) + "]"
    if isinstance(value, (dbus.Struct, tuple)):
        return "(" + ", ".join(show(v) for v in value) + ")"
    return str(value)


def run(bus, name, operations):
    player = bus.get_object(name, PATH, introspect=False)
    properties = dbus.Interface(player, "org.freedesktop.DBus.Properties")
    i = 0
    while i < len(operations):
        op = operations[i]
        if op == "get":
            print(show(properties.Get(IFACES[operations[i + 1]], operations[i + 2])))
            i += 3
        elif op == "set":
            try:
                properties.Set(IFACES[operations[i + 1]], operations[i + 2], typed(operations[i + 3]), signature="ssv")
                print("ok")
            except dbus.DBusException as error:
                print("error " + error.get_dbus_name() + ": " + error.get_dbus_message())
            i += 4
        elif op == "call":
            iface, method = IFACES[operations[i + 1]], operations[i + 2]
            args = []
            i += 3
            while i < len(operations) and ":" in operations[i] and operations[i] not in ("get", "set", "call"):
                args.append(typed(operations[i]))
                i += 1
            try:
                result = getattr(dbus.Interface(player, iface), method)(*args)
                print("ok" + ("" if result is None else " " + show(result)))
            except dbus.DBusException as error:
                print("error " + error.get_dbus_name() + ": " + error.get_dbus_message())
        elif op == "tracks":
            print(" ".join(str(t) for t in properties.Get(IFACES["tracklist"], "Tracks")))
            i += 1
        elif op == "titles":
            tracks = properties.Get(IFACES["tracklist"], "Tracks")
            # Get returns the array as a variant; pass it back as a plain ao.
            metadata = dbus.Interface(player, IFACES["tracklist"]).GetTracksMetadata(dbus.Array(tracks, signature="o"))
            print("|".join(str(m.get("xesam:title", "-")) for m in metadata))
            i += 1
        elif op == "playlists":
            listed = dbus.Interface(player, IFACES["playlists"]).GetPlaylists(dbus.UInt32(0), dbus.UInt32(100), "Alphabetical", False)
            print("|".join(str(path) + " " + str(name) for path, name, _ in listed))
            i += 1
        elif op == "current":
            metadata = properties.Get(IFACES["player"], "Metadata")
            print(str(metadata.get("mpris:trackid", "-")) + " " + str(metadata.get("xesam:title", "-")))
            i += 1
        else:
            raise SystemExit("unknown operation " + op)


def watch(bus, name):
    import dbus.mainloop.glib
    from gi.repository import GLib
    owner = bus.get_name_owner(name)

    def changed(interface, values, invalidated, path=None):
        for short in ("player", "bridge"):
            if path == PATH and interface == IFACES[short]:
                print("changed " + short + " " + ",".join(k + "=" + show(values[k]) for k in sorted(values)),
                      flush=True)

    def on(member, render):
        bus.add_signal_receiver(lambda *a, **k: print(render(*a), flush=True), member, IFACES["tracklist"], owner,
                                path=PATH)

    bus.add_signal_receiver(changed, "PropertiesChanged", "org.freedesktop.DBus.Properties", owner,
                            path_keyword="path")
    bus.add_signal_receiver(lambda p: print("seeked " + str(int(p)), flush=True), "Seeked", IFACES["player"], owner,
                            path=PATH)
    on("TrackAdded", lambda m, after: "added " + str(m["mpris:trackid"]) + " after " + str(after))
    on("TrackRemoved", lambda t: "removed " + str(t))
    on("TrackListReplaced", lambda ts, cur: "replaced " + str(len(ts)) + " current " + str(cur))
    on("TrackMetadataChanged", lambda t, m: "metadata " + str(t) + " " + str(m.get("xesam:title", "-")))
    # A round trip after AddMatch guarantees the matches are active.
    bus.get_name_owner("org.freedesktop.DBus")
    print("READY", flush=True)
    GLib.MainLoop().run()


if __name__ == "__main__":
    if len(sys.argv) > 2 and sys.argv[2] == "watch":
        import dbus.mainloop.glib
        dbus.mainloop.glib.DBusGMainLoop(set_as_default=True)
        watch(dbus.SessionBus(), sys.argv[1])
    else:
        run(dbus.SessionBus(), sys.argv[1], sys.argv[2:])
