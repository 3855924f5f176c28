"""A stand-in for BlueZ's bluetoothd on a private system bus: what a car reaches through it.

Usage: bluez_stand_in.py [--adapters hci0,hci1] [--hang-register]

Owns org.bluez on the system bus (DBUS_SYSTEM_BUS_ADDRESS) and serves what mpris-proxy and
a player registering itself use of bluetoothd 5.66:
  /                   org.freedesktop.DBus.ObjectManager (GetManagedObjects, InterfacesAdded,
                      InterfacesRemoved)
  /org/bluez/<hciN>   org.bluez.Adapter1 (properties only) and org.bluez.Media1
                      (RegisterPlayer(o, a{sv}), UnregisterPlayer(o))

RegisterPlayer checks the properties as bluetoothd 5.66 does (profiles/audio/media.c) and
answers org.bluez.Error.InvalidArguments where it would: PlaybackStatus s, Position x,
Shuffle b, LoopStatus s (None, Track or Playlist), CanPlay/CanPause/CanGoNext/CanGoPrevious/
CanControl b, Identity s, Metadata a{sv} with xesam:title s, xesam:album s, xesam:artist and
xesam:genre as, mpris:length x, xesam:trackNumber i; other keys are ignored. A second
registration of the same sender and path on one adapter is org.bluez.Error.AlreadyExists. With
--hang-register, RegisterPlayer never answers (a hostile or stuck bluetoothd).

Prints one JSON object per line on stdout:
  {"event": "ready"}                                          name owned, objects served
  {"event": "registered", "adapter", "sender", "path", "name", "properties": {name: signature},
   "metadata": {key: signature}, "values": {name: value}}     name: Identity, or "Player" as
                                                              the car shows a nameless player
  {"event": "rejected", "adapter", "sender", "path", "error"}
  {"event": "unregistered", "adapter", "sender", "path"}      UnregisterPlayer
  {"event": "gone", "sender"}                                 a registered sender left the bus
  {"event": "changed", "path", "values": {name: value}, "signatures": {name: signature}}
                                                              PropertiesChanged of
                                                              org.mpris.MediaPlayer2.Player
  {"event": "seeked", "path", "position": µs}
  {"event": "sent", "command"}                               a car command, sent (no reply awaited)
  {"event": "refused", "command", "reason"}                   bluetoothd would not send it
  {"event": "adapters", "paths": [...]}                       after adding or removing one
Values: strings, numbers and booleans as JSON; arrays as lists; Metadata as an object.

Reads commands on stdin, one a line, acting on the latest registration as AVRCP does
through bluetoothd: Play, Pause, Next, Previous, Stop (sent only when CanControl and the
matching Can… are true, as bluetoothd does; Stop needs CanControl), `Shuffle on|off`,
`LoopStatus None|Track|Playlist` (org.freedesktop.DBus.Properties.Set), `add-adapter hciN`,
`remove-adapter hciN`. End of stdin ends the stand-in.
"""

import json
import os
import sys

import dbus
import dbus.lowlevel
import dbus.mainloop.glib
import dbus.service
from gi.repository import GLib

BLUEZ = "org.bluez"
ADAPTER = "org.bluez.Adapter1"
MEDIA = "org.bluez.Media1"
PLAYER = "org.mpris.MediaPlayer2.Player"
PROPERTIES = "org.freedesktop.DBus.Properties"
OBJECT_MANAGER = "org.freedesktop.DBus.ObjectManager"


def emit(**fields):
    print(json.dumps(fields, sort_keys=True), flush=True)


def signature(value):
    """The D-Bus signature of a value dbus-python unpacked from a variant."""
    if getattr(value, "variant_level", 0) > 1:
        return "v"
    simple = [(dbus.Boolean, "b"), (dbus.Byte, "y"), (dbus.Int16, "n"), (dbus.UInt16, "q"), (dbus.Int32, "i"),
              (dbus.UInt32, "u"), (dbus.Int64, "x"), (dbus.UInt64, "t"), (dbus.Double, "d"),
              (dbus.ObjectPath, "o"), (dbus.Signature, "g"), (dbus.String, "s")]
    for kind, code in simple:
        if isinstance(value, kind):
            return code
    if isinstance(value, dbus.Dictionary):
        return "a{" + (value.signature or "sv") + "}"
    if isinstance(value, dbus.Array):
        return "a" + (value.signature or "v")
    if isinstance(value, dbus.Struct):
        return "(" + "".join(signature(v) for v in value) + ")"
    return "?"


def plain(value):
    if isinstance(value, dbus.Boolean):
        return bool(value)
    if isinstance(value, (dbus.Dictionary, dict)):
        return {str(k): plain(v) for k, v in value.items()}
    if isinstance(value, (dbus.Array, dbus.Struct, list, tuple)):
        return [plain(v) for v in value]
    if isinstance(value, (dbus.Double, float)):
        return float(value)
    if isinstance(value, (int,)):
        return int(value)
    return str(value)


METADATA_TYPES = {"xesam:title": "s", "xesam:album": "s", "xesam:artist": "as", "xesam:genre": "as",
                  "mpris:length": "x", "xesam:tracknumber": "i"}
PROPERTY_TYPES = {"playbackstatus": "s", "position": "x", "shuffle": "b", "loopstatus": "s", "canplay": "b",
                  "canpause": "b", "cangonext": "b", "cangoprevious": "b", "cancontrol": "b", "identity": "s",
                  "metadata": "a{sv}"}


def check(properties):
    """None if bluetoothd 5.66 accepts these player properties, else why not."""
    for name, value in properties.items():
        expected = PROPERTY_TYPES.get(name.lower())
        if expected is None:
            continue
        actual = signature(value)
        # An empty string array reads as an array of anything in bluetoothd: only its first element is typed.
        if actual != expected:
            return "%s is %s, not %s" % (name, actual, expected)
        if name.lower() == "loopstatus" and str(value).lower() not in ("none", "track", "playlist"):
            return "LoopStatus %r" % str(value)
        if name.lower() == "metadata":
            for key, item in value.items():
                wanted = METADATA_TYPES.get(key.lower())
                if wanted is None:
                    continue
                got = signature(item)
                if wanted == "as" and got.startswith("a") and len(item) == 0:
                    continue
                # bluetoothd accepts an unsigned integer where it expects a signed one, with a warning.
                if got != wanted and not (wanted, got) in (("x", "t"), ("i", "u")):
                    return "Metadata %s is %s, not %s" % (key, got, wanted)
    return None


class Registration:
    def __init__(self, adapter, sender, path, properties):
        self.adapter, self.sender, self.path = adapter, sender, path
        self.properties = {str(k): v for k, v in properties.items()}
        self.watches = []

    def flag(self, name):
        return bool(self.properties.get(name, False))


class StandIn:
    def __init__(self, bus, hang_register):
        self.bus = bus
        self.hang_register = hang_register
        self.adapters = {}
        self.registrations = []  # in order; commands go to the last
        self.name_watch = bus.add_signal_receiver(self.name_owner_changed, "NameOwnerChanged",
                                                  "org.freedesktop.DBus", "org.freedesktop.DBus",
                                                  "/org/freedesktop/DBus")

    # Registrations

    def register(self, adapter, path, properties, sender, reply, error):
        # Per adapter, as bluetoothd keeps its players.
        if any(r.adapter == adapter and r.sender == sender and r.path == path for r in self.registrations):
            error(dbus.DBusException("Already Exists", name="org.bluez.Error.AlreadyExists"))
            return
        problem = check(properties)
        if problem:
            emit(event="rejected", adapter=adapter, sender=sender, path=str(path), error=problem)
            error(dbus.DBusException("Invalid arguments in method call", name="org.bluez.Error.InvalidArguments"))
            return
        registration = Registration(adapter, sender, str(path), properties)
        registration.watches = [
            self.bus.add_signal_receiver(lambda i, c, inv: self.changed(registration, i, c), "PropertiesChanged",
                                         PROPERTIES, sender, str(path)),
            self.bus.add_signal_receiver(lambda p: self.seeked(registration, p), "Seeked", PLAYER, sender,
                                         str(path)),
        ]
        self.registrations.append(registration)
        emit(event="registered", adapter=adapter, sender=sender, path=str(path),
             name=str(properties.get("Identity", "Player")),
             properties={str(k): signature(v) for k, v in properties.items()},
             metadata={str(k): signature(v) for k, v in properties.get("Metadata", {}).items()},
             values={str(k): plain(v) for k, v in properties.items()})
        if self.hang_register:
            return  # never answered
        reply()

    def unregister(self, adapter, path, sender):
        for registration in list(self.registrations):
            if registration.adapter == adapter and registration.sender == sender and registration.path == str(path):
                self.drop(registration)
                emit(event="unregistered", adapter=adapter, sender=sender, path=str(path))
                return
        raise dbus.DBusException("Does Not Exist", name="org.bluez.Error.DoesNotExist")

    def drop(self, registration):
        for watch in registration.watches:
            watch.remove()
        self.registrations.remove(registration)

    def name_owner_changed(self, name, old, new):
        if new == "" and name.startswith(":"):
            gone = [r for r in self.registrations if r.sender == name]
            for registration in gone:
                self.drop(registration)
            if gone:
                emit(event="gone", sender=name)

    def changed(self, registration, interface, changed):
        if interface != PLAYER:
            return
        registration.properties.update({str(k): v for k, v in changed.items()})
        emit(event="changed", path=registration.path, values={str(k): plain(v) for k, v in changed.items()},
             signatures={str(k): signature(v) for k, v in changed.items()})

    def seeked(self, registration, position):
        emit(event="seeked", path=registration.path, position=int(position))

    # The car's commands

    def command(self, line):
        words = line.split()
        if not words:
            return
        if words[0] in ("add-adapter", "remove-adapter"):
            (self.add_adapter if words[0] == "add-adapter" else self.remove_adapter)(words[1])
            emit(event="adapters", paths=sorted(self.adapters))
            return
        if not self.registrations:
            emit(event="refused", command=line, reason="no player registered")
            return
        registration = self.registrations[-1]
        gates = {"Play": "CanPlay", "Pause": "CanPause", "Next": "CanGoNext", "Previous": "CanGoPrevious",
                 "Stop": None}
        if words[0] in gates:
            gate = gates[words[0]]
            if not registration.flag("CanControl") or (gate and not registration.flag(gate)):
                emit(event="refused", command=line, reason="CanControl or %s is not true" % gate)
                return
            message = dbus.lowlevel.MethodCallMessage(registration.sender, registration.path, PLAYER, words[0])
        elif words[0] in ("Shuffle", "LoopStatus") and len(words) == 2:
            message = dbus.lowlevel.MethodCallMessage(registration.sender, registration.path, PROPERTIES, "Set")
            value = dbus.Boolean(words[1] == "on") if words[0] == "Shuffle" else dbus.String(words[1])
            message.append(PLAYER, words[0], value, signature="ssv")
        else:
            emit(event="refused", command=line, reason="unknown command")
            return
        # As bluetoothd sends them (g_dbus_send_message): no wait for a reply, which mpris-proxy
        # never sends for a method without results anyway.
        self.bus.send_message(message)
        emit(event="sent", command=line)

    # Adapters

    def add_adapter(self, name):
        path = "/org/bluez/" + name
        if path in self.adapters:
            return
        self.adapters[path] = Adapter(self, path, name)
        if manager is not None:
            manager.InterfacesAdded(dbus.ObjectPath(path), self.adapters[path].interfaces())

    def remove_adapter(self, name):
        path = "/org/bluez/" + name
        adapter = self.adapters.pop(path, None)
        if adapter is None:
            return
        for registration in [r for r in self.registrations if r.adapter == path]:
            self.drop(registration)
        adapter.remove_from_connection()
        if manager is not None:
            manager.InterfacesRemoved(dbus.ObjectPath(path), dbus.Array([ADAPTER, MEDIA], signature="s"))


class Adapter(dbus.service.Object):
    def __init__(self, stand_in, path, name):
        dbus.service.Object.__init__(self, stand_in.bus, path)
        self.stand_in, self.path, self.name = stand_in, path, name

    def interfaces(self):
        adapter = dbus.Dictionary({"Address": dbus.String("00:00:5E:00:53:0%d" % len(self.stand_in.adapters)),
                                   "Name": dbus.String("stand-in " + self.name),
                                   "Powered": dbus.Boolean(True)}, signature="sv")
        return dbus.Dictionary({ADAPTER: adapter, MEDIA: dbus.Dictionary({}, signature="sv")}, signature="sa{sv}")

    @dbus.service.method(MEDIA, in_signature="oa{sv}", out_signature="", sender_keyword="sender",
                         async_callbacks=("reply", "error"))
    def RegisterPlayer(self, path, properties, sender=None, reply=None, error=None):
        self.stand_in.register(self.path, path, properties, sender, reply, error)

    @dbus.service.method(MEDIA, in_signature="o", out_signature="", sender_keyword="sender")
    def UnregisterPlayer(self, path, sender=None):
        self.stand_in.unregister(self.path, path, sender)

    @dbus.service.method(PROPERTIES, in_signature="ss", out_signature="v")
    def Get(self, interface, name):
        return self.interfaces()[interface][name]

    @dbus.service.method(PROPERTIES, in_signature="s", out_signature="a{sv}")
    def GetAll(self, interface):
        return self.interfaces().get(interface, dbus.Dictionary({}, signature="sv"))


class Manager(dbus.service.Object):
    def __init__(self, stand_in):
        dbus.service.Object.__init__(self, stand_in.bus, "/")
        self.stand_in = stand_in

    @dbus.service.method(OBJECT_MANAGER, in_signature="", out_signature="a{oa{sa{sv}}}")
    def GetManagedObjects(self):
        return dbus.Dictionary({dbus.ObjectPath(p): a.interfaces() for p, a in self.stand_in.adapters.items()},
                               signature="oa{sa{sv}}")

    @dbus.service.signal(OBJECT_MANAGER, signature="oa{sa{sv}}")
    def InterfacesAdded(self, path, interfaces):
        pass

    @dbus.service.signal(OBJECT_MANAGER, signature="oas")
    def InterfacesRemoved(self, path, interfaces):
        pass


manager = None


def main():
    global manager
    arguments = sys.argv[1:]
    adapters = ["hci0"]
    if "--adapters" in arguments:
        adapters = [a for a in arguments[arguments.index("--adapters") + 1].split(",") if a]
    dbus.mainloop.glib.DBusGMainLoop(set_as_default=True)
    bus = dbus.SystemBus()
    stand_in = StandIn(bus, "--hang-register" in arguments)
    for name in adapters:
        stand_in.add_adapter(name)
    manager = Manager(stand_in)
    loop = GLib.MainLoop()

    pending = bytearray()

    # os.read, not readline: a buffered reader could hold lines the watch would never report.
    def read(source, condition):
        chunk = os.read(sys.stdin.fileno(), 4096)
        if not chunk:
            loop.quit()
            return False
        pending.extend(chunk)
        while b"\n" in pending:
            line, _, rest = bytes(pending).partition(b"\n")
            pending[:] = rest
            stand_in.command(line.decode().strip())
        return True

    GLib.io_add_watch(sys.stdin.fileno(), GLib.IO_IN | GLib.IO_HUP, read)
    # Objects first, then the name, so no caller finds the name without its objects.
    name = dbus.service.BusName(BLUEZ, bus, do_not_queue=True)
    emit(event="ready")
    loop.run()
    del name


if __name__ == "__main__":
    main()
