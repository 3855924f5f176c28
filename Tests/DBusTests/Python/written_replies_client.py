"""A python3-dbus client for replies the Swift service writes to its socket itself.

Sends, without waiting, ROUNDS times: Rows(BIG) (a reply of several megabytes written in wire
format, more than the socket takes at once), Echo(i) (which emits a signal, then answers through
libdbus), Rows(3). Then GetAll of the rows interface (stored values in wire format).
Every message received is checked: each row's values, the echo, the properties, and the order:
per round, Rows(BIG)'s reply, Echoed, Echo's reply, Rows(3)'s reply. Every serial of the
service's must differ. Prints `checked N messages` and exits 0, or the problems and exits 1."""
import sys
import dbus
import dbus.lowlevel
import dbus.mainloop.glib
from gi.repository import GLib

NAME, PATH, IFACE = "org.mprisbridge.Test", "/org/mprisbridge/Rows", "org.mprisbridge.Rows1"
ROUNDS, BIG = 3, int(sys.argv[1])
dbus.mainloop.glib.DBusGMainLoop(set_as_default=True)
bus = dbus.SessionBus()
bus.add_match_string("type='signal',sender='%s',interface='%s'" % (NAME, IFACE))
problems, arrivals, serials, labels = [], [], [], {}
loop = GLib.MainLoop()
expected_replies = ROUNDS * 3 + 1


def row_problem(index, row):
    want = {
        "Index": index, "Name": "row %d — naïve café 🎵 \ufffe" % index, "Path": "/org/mprisbridge/Rows/r%d" % index,
        "Even": index % 2 == 0, "Size": -(index << 33), "Ratio": index / 8.0, "Tags": ["a", "b%d" % index],
        "Pair": ("x", index), "Padding": "p" * (index % 700),
    }
    if sorted(row.keys()) != sorted(want.keys()):
        return "row %d keys %s" % (index, sorted(row.keys()))
    for key, value in want.items():
        got = row[key]
        if isinstance(value, tuple):
            got = tuple(got)
        if isinstance(value, list):
            got = list(got)
        if got != value:
            return "row %d %s: %r != %r" % (index, key, got, value)
    return None


def on_signal(connection, message):
    if message.get_type() == dbus.lowlevel.MESSAGE_TYPE_SIGNAL and message.get_interface() == IFACE:
        arrivals.append(("Echoed", message.get_args_list()[0]))
        serials.append(message.get_serial())


def on_reply(message):
    # libdbus hands a reply to its pending call, not to the filters; both in arrival order.
    kind = message.get_type()
    if kind in (dbus.lowlevel.MESSAGE_TYPE_METHOD_RETURN, dbus.lowlevel.MESSAGE_TYPE_ERROR):
        label = labels.get(message.get_reply_serial())
        if label is None:
            return
        serials.append(message.get_serial())
        if kind == dbus.lowlevel.MESSAGE_TYPE_ERROR:
            problems.append("%s failed: %s" % (label, message.get_args_list()))
        else:
            args = message.get_args_list()
            if label[0] == "Rows":
                rows = args[0]
                if len(rows) != label[1]:
                    problems.append("Rows(%d) gave %d rows" % (label[1], len(rows)))
                for index, row in enumerate(rows):
                    problem = row_problem(index, row)
                    if problem:
                        problems.append(problem)
                        break
            elif label[0] == "Echo" and args != [label[1]]:
                problems.append("Echo(%r) gave %r" % (label[1], args))
            elif label[0] == "GetAll" and dict(args[0]) != {"Title": "Rows ✓", "Count": 42}:
                problems.append("GetAll gave %r" % (args[0],))
        arrivals.append(label)
        if sum(1 for a in arrivals if a[0] != "Echoed") == expected_replies:
            loop.quit()


bus.add_message_filter(on_signal)


def call(interface, member, signature, args, label):
    message = dbus.lowlevel.MethodCallMessage(NAME, PATH, interface, member)
    if args:
        message.append(*args, signature=signature)
    bus.send_message_with_reply(message, on_reply, 60.0)
    labels[message.get_serial()] = label


def start():
    for round in range(ROUNDS):
        call(IFACE, "Rows", "u", [BIG], ("Rows", BIG))
        call(IFACE, "Echo", "s", ["echo %d" % round], ("Echo", "echo %d" % round))
        call(IFACE, "Rows", "u", [3], ("Rows", 3))
    call("org.freedesktop.DBus.Properties", "GetAll", "s", [IFACE], ("GetAll",))
    return False


GLib.idle_add(start)
GLib.timeout_add_seconds(int(sys.argv[2]) if len(sys.argv) > 2 else 25, lambda: (problems.append("timed out"), loop.quit()))
loop.run()
expected = []
for round in range(ROUNDS):
    expected += [("Rows", BIG), ("Echoed", "echo %d" % round), ("Echo", "echo %d" % round), ("Rows", 3)]
in_order = [a for a in arrivals if a[0] != "GetAll"]
if in_order != expected:
    problems.append("order %r" % in_order)
if ("GetAll",) not in arrivals:
    problems.append("no GetAll reply")
if len(set(serials)) != len(serials) or 0 in serials:
    problems.append("serials %r" % serials)
if problems:
    print("\n".join(problems))
    sys.exit(1)
print("checked %d messages" % len(arrivals))
