"""A python3-dbus MPRIS client for the tests. Runs each operation given on the
command line (one argument each, words separated by spaces) and prints one line
per operation:

  types                      every property's wire signature, then each Metadata entry's
  get IFACE PROP             the value, as `<signature> <value>`
  set IFACE PROP T:V         `ok`, or `error NAME: message`
  call IFACE METHOD [T:V…]   `ok [result]`, or `error NAME: message`
  typedcall IFACE METHOD [T:V…]  `ok <result's signature> <result>`, or `error NAME: message`
  tracks                     for each track of the TrackList, in order: its id, then each
                             entry of GetTracksMetadata as `  key signature value`

IFACE is root, player, ext or tracks; T:V is a typed value such as d:nan, x:-5, s:Track,
o:/a/b, b:true, i:3, ao:/a,/b (ao: alone is empty; a string after s: may contain
spaces encoded as %20).
Usage: mpris_client.py BUS_NAME OPERATION..."""
import sys
import dbus

INTERFACES = {"root": "org.mpris.MediaPlayer2", "player": "org.mpris.MediaPlayer2.Player",
              "ext": "org.mprisbridge.Player1", "tracks": "org.mpris.MediaPlayer2.TrackList"}
PROPERTIES = "org.freedesktop.DBus.Properties"


def signature(value):
    """The D-Bus signature of a value as dbus-python unmarshalled it."""
    simple = [(dbus.Boolean, "b"), (dbus.Byte, "y"), (dbus.Int16, "n"), (dbus.UInt16, "q"), (dbus.Int32, "i"),
              (dbus.UInt32, "u"), (dbus.Int64, "x"), (dbus.UInt64, "t"), (dbus.Double, "d"),
              (dbus.ObjectPath, "o"), (dbus.Signature, "g"), (dbus.String, "s")]
    for kind, code in simple:
        if isinstance(value, kind):
            return code
    if isinstance(value, dbus.Dictionary):
        return "a{" + value.signature + "}"
    if isinstance(value, dbus.Array):
        return "a" + value.signature
    if isinstance(value, dbus.Struct):
        return "(" + "".join(signature(v) for v in value) + ")"
    return "?" + type(value).__name__


def typed(text, variant_level=0):
    """A typed value; variant_level 1 sends it as a variant (Properties.Set's `v`)."""
    kind, _, raw = text.partition(":")
    raw = raw.replace("%20", " ")
    if kind == "ao":
        return dbus.Array([dbus.ObjectPath(p) for p in raw.split(",") if p], signature="o",
                          variant_level=variant_level)
    makers = {"d": lambda: dbus.Double(float(raw), variant_level=variant_level),
              "x": lambda: dbus.Int64(int(raw), variant_level=variant_level),
              "i": lambda: dbus.Int32(int(raw), variant_level=variant_level),
              "b": lambda: dbus.Boolean(raw == "true", variant_level=variant_level),
              "o": lambda: dbus.ObjectPath(raw, variant_level=variant_level),
              "s": lambda: dbus.String(raw, variant_level=variant_level)}
    return makers[kind]()


def show(value):
    if isinstance(value, dbus.Boolean):
        return "true" if value else "false"
    if isinstance(value, (dbus.Array, list)):
        return "[" + ", ".join(show(v) for v in value) + "]"
    if isinstance(value, dbus.Dictionary):
        return "{" + ", ".join(k + ": " + show(value[k]) for k in sorted(value)) + "}"
    if isinstance(value, dbus.Double):
        return repr(float(value))
    return str(value)


def run(player, words):
    op = words[0]
    try:
        if op == "types":
            lines = []
            for short in ("root", "player", "ext"):
                values = player.GetAll(INTERFACES[short], dbus_interface=PROPERTIES)
                lines += [short + "." + name + " " + signature(values[name]) for name in sorted(values)]
                if short == "player":
                    metadata = values["Metadata"]
                    lines += ["metadata." + key + " " + signature(metadata[key]) for key in sorted(metadata)]
            return "\n".join(lines)
        if op == "get":
            value = player.Get(INTERFACES[words[1]], words[2], dbus_interface=PROPERTIES)
            return signature(value) + " " + show(value)
        if op == "set":
            player.Set(INTERFACES[words[1]], words[2], typed(words[3], variant_level=1), dbus_interface=PROPERTIES)
            return "ok"
        if op == "call":
            method = player.get_dbus_method(words[2], INTERFACES[words[1]])
            result = method(*[typed(w) for w in words[3:]])
            return "ok" if result is None else "ok " + show(result)
        if op == "typedcall":
            method = player.get_dbus_method(words[2], INTERFACES[words[1]])
            result = method(*[typed(w) for w in words[3:]])
            return "ok " + signature(result) + " " + show(result)
        if op == "tracks":
            ids = player.Get(INTERFACES["tracks"], "Tracks", dbus_interface=PROPERTIES)
            # Get returns the ids wrapped as a variant; send them back as a plain `ao`.
            metadata = player.GetTracksMetadata(dbus.Array(ids, signature="o"), dbus_interface=INTERFACES["tracks"])
            lines = []
            for track_id, fields in zip(ids, metadata):
                lines.append(str(track_id))
                lines += ["  " + key + " " + signature(fields[key]) + " " + show(fields[key]) for key in sorted(fields)]
            return "\n".join(lines)
        return "unknown operation " + op
    except dbus.exceptions.DBusException as error:
        return "error " + error.get_dbus_name() + ": " + error.get_dbus_message()


bus = dbus.SessionBus()
player = bus.get_object(sys.argv[1], "/org/mpris/MediaPlayer2", introspect=False)
for operation in sys.argv[2:]:
    print(run(player, operation.split(" ")), flush=True)
