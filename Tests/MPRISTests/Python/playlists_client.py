"""A python3-dbus client of org.mpris.MediaPlayer2.Playlists for the tests.

  playlists_client.py BUS_NAME watch
      Prints READY once subscribed, then one line per signal of the Playlists interface:
        changed Name=value,Name=value        (PropertiesChanged; ActivePlaylist as its name, - when not valid)
        playlistchanged <id> <icon|-> <name> (PlaylistChanged)

  playlists_client.py BUS_NAME OPERATION...
      Runs each operation (one argument each, words separated by spaces) and prints:
        get PROP                         `<signature> <value>`
        list ORDER REVERSE INDEX MAX     `ok Name|Name|…` or `error NAME: message`
        full ORDER                       one line per playlist, `<id> <icon|-> <name>`, or `error …`
        activate ID                      calls ActivatePlaylist and, until its reply, prints each
                                         PropertiesChanged of the player object as `changed <iface> Name=value,…`
                                         (Playlists' ActivePlaylist as its name, the Player's Metadata as its
                                         title), then `ok` or `error NAME: message`, then `elapsed <ms>`
"""
import sys
import time
import dbus
import dbus.mainloop.glib
from gi.repository import GLib

PATH = "/org/mpris/MediaPlayer2"
PLAYLISTS = "org.mpris.MediaPlayer2.Playlists"
PROPERTIES = "org.freedesktop.DBus.Properties"
SHORT = {"org.mpris.MediaPlayer2": "root", "org.mpris.MediaPlayer2.Player": "player",
         "org.mprisbridge.Player1": "ext", "org.mpris.MediaPlayer2.TrackList": "tracks", PLAYLISTS: "playlists"}


def signature(value):
    simple = [(dbus.Boolean, "b"), (dbus.UInt32, "u"), (dbus.Int32, "i"), (dbus.Int64, "x"), (dbus.Double, "d"),
              (dbus.ObjectPath, "o"), (dbus.String, "s")]
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


def show(value):
    if isinstance(value, dbus.Boolean):
        return "true" if value else "false"
    if isinstance(value, (dbus.Array, list)):
        return "[" + ",".join(show(v) for v in value) + "]"
    if isinstance(value, dbus.Struct):
        return "(" + ", ".join(show(v) for v in value) + ")"
    return str(value)


def show_property(name, value):
    if name == "ActivePlaylist":
        valid, playlist = value
        return str(playlist[1]) if valid else "-"
    if name == "Metadata":
        return str(value.get("xesam:title", "-"))
    return show(value)


def describe_change(values):
    return ",".join(name + "=" + show_property(name, values[name]) for name in sorted(values))


def main_loop_bus():
    dbus.mainloop.glib.DBusGMainLoop(set_as_default=True)
    return dbus.SessionBus()


def watch(bus_name):
    bus = main_loop_bus()
    owner = bus.get_name_owner(bus_name)

    def changed(interface, values, invalidated, path=None):
        if path == PATH and interface == PLAYLISTS:
            print("changed " + describe_change(values), flush=True)

    def playlist_changed(playlist, path=None):
        if path == PATH:
            print("playlistchanged %s %s %s" % (playlist[0], playlist[2] or "-", playlist[1]), flush=True)

    bus.add_signal_receiver(changed, "PropertiesChanged", PROPERTIES, owner, path_keyword="path")
    bus.add_signal_receiver(playlist_changed, "PlaylistChanged", PLAYLISTS, owner, path_keyword="path")
    # A round trip to the daemon after AddMatch guarantees the matches are active.
    bus.get_name_owner("org.freedesktop.DBus")
    print("READY", flush=True)
    GLib.MainLoop().run()


def activate(bus, player, owner, playlist_id):
    lines = []
    loop = GLib.MainLoop()

    def changed(interface, values, invalidated, path=None):
        if path == PATH:
            lines.append("changed %s %s" % (SHORT.get(interface, interface), describe_change(values)))

    match = bus.add_signal_receiver(changed, "PropertiesChanged", PROPERTIES, owner, path_keyword="path")
    bus.get_name_owner("org.freedesktop.DBus")
    started = time.monotonic()

    def finish(outcome):
        lines.append(outcome)
        lines.append("elapsed %d" % int((time.monotonic() - started) * 1000))
        loop.quit()

    player.ActivatePlaylist(dbus.ObjectPath(playlist_id), dbus_interface=PLAYLISTS,
                            reply_handler=lambda: finish("ok"),
                            error_handler=lambda e: finish("error %s: %s" % (e.get_dbus_name(), e.get_dbus_message())))
    loop.run()
    match.remove()
    return "\n".join(lines)


def run(bus, player, owner, words):
    op = words[0]
    try:
        if op == "get":
            value = player.Get(PLAYLISTS, words[1], dbus_interface=PROPERTIES)
            return signature(value) + " " + show(value)
        if op == "list":
            order, reverse, index, count = words[1], words[2] == "true", int(words[3]), int(words[4])
            playlists = player.GetPlaylists(dbus.UInt32(index), dbus.UInt32(count), order, reverse,
                                            dbus_interface=PLAYLISTS)
            return "ok " + "|".join(str(p[1]) for p in playlists)
        if op == "full":
            playlists = player.GetPlaylists(dbus.UInt32(0), dbus.UInt32(1000), words[1], False,
                                            dbus_interface=PLAYLISTS, signature="uusb")
            return "\n".join("%s %s %s" % (p[0], p[2] or "-", p[1]) for p in playlists)
        if op == "activate":
            return activate(bus, player, owner, words[1])
        return "unknown operation " + op
    except dbus.exceptions.DBusException as error:
        return "error " + error.get_dbus_name() + ": " + error.get_dbus_message()


if sys.argv[2] == "watch":
    watch(sys.argv[1])
else:
    session = main_loop_bus()
    owner_name = session.get_name_owner(sys.argv[1])
    remote = session.get_object(sys.argv[1], PATH, introspect=False)
    for operation in sys.argv[2:]:
        print(run(session, remote, owner_name, operation.split(" ")), flush=True)
