"""A python3-dbus client of an MPRIS player's now-playing properties.

  now_playing.py BUS_NAME metadata   prints each Metadata entry, sorted by key, as
                                     `key signature value` (arrays as [a,b]), then END
  now_playing.py BUS_NAME watch      prints READY once subscribed, then one line per signal
                                     of the player object:
                                       changed Name=value,Name=value   (Player properties;
                                                                        Metadata as its track id)
                                       seeked <position µs>
"""
import sys
import dbus

PLAYER = "org.mpris.MediaPlayer2.Player"
PATH = "/org/mpris/MediaPlayer2"


def signature(value):
    simple = [(dbus.Boolean, "b"), (dbus.Int32, "i"), (dbus.UInt32, "u"), (dbus.Int64, "x"),
              (dbus.UInt64, "t"), (dbus.Double, "d"), (dbus.ObjectPath, "o"), (dbus.String, "s")]
    for kind, code in simple:
        if isinstance(value, kind):
            return code
    if isinstance(value, dbus.Array):
        return "a" + value.signature
    return "?" + type(value).__name__


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


def metadata(bus, name):
    player = bus.get_object(name, PATH)
    fields = player.Get(PLAYER, "Metadata", dbus_interface="org.freedesktop.DBus.Properties")
    for key in sorted(fields):
        print(key, signature(fields[key]), show(key, fields[key]))
    print("END")


def watch(bus, name):
    from gi.repository import GLib
    owner = bus.get_name_owner(name)

    def changed(interface, values, invalidated, path=None):
        if path == PATH and interface == PLAYER and values:
            print("changed " + ",".join(k + "=" + show(k, values[k]) for k in sorted(values)), flush=True)

    def seeked(position, path=None):
        if path == PATH:
            print("seeked " + str(int(position)), flush=True)

    bus.add_signal_receiver(changed, "PropertiesChanged", "org.freedesktop.DBus.Properties", owner,
                            path_keyword="path")
    bus.add_signal_receiver(seeked, "Seeked", PLAYER, owner, path_keyword="path")
    # A round trip to the daemon after AddMatch guarantees the matches are active.
    bus.get_name_owner("org.freedesktop.DBus")
    print("READY", flush=True)
    GLib.MainLoop().run()


if sys.argv[2] == "watch":
    import dbus.mainloop.glib
    dbus.mainloop.glib.DBusGMainLoop(set_as_default=True)
    watch(dbus.SessionBus(), sys.argv[1])
else:
    metadata(dbus.SessionBus(), sys.argv[1])
