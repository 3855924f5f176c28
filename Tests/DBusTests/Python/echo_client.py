"""A python3-dbus client that sends every D-Bus type through the Swift
service's methods and checks value and exact signature of each reply.
Prints `checked N` and exits 0, or prints the mismatches and exits 1."""
import math
import sys
import dbus
from dbus_types import signature

bus = dbus.SessionBus()
test = dbus.Interface(bus.get_object("org.mprisbridge.Test", "/org/mprisbridge/Test"), "org.mprisbridge.Test1")
failures = []
checked = 0


def same(a, b):
    if isinstance(a, float) and math.isnan(a):
        return isinstance(b, float) and math.isnan(b)
    if isinstance(a, (list, tuple)):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    if isinstance(a, dict):
        return list(a.keys()) == list(b.keys()) and all(same(a[k], b[k]) for k in a)
    return a == b


def nested_arrays(depth):
    value = dbus.Array(["leaf"], signature="s")
    for level in range(1, depth):
        value = dbus.Array([value], signature="a" * level + "s")
    return value


cases = [
    dbus.Byte(0), dbus.Byte(255), dbus.Boolean(True), dbus.Boolean(False),
    dbus.Int16(-32768), dbus.Int16(32767), dbus.UInt16(65535), dbus.Int32(-2**31), dbus.Int32(2**31 - 1),
    dbus.UInt32(2**32 - 1), dbus.Int64(-2**63), dbus.Int64(2**63 - 1), dbus.UInt64(2**64 - 1),
    dbus.Double(3.25), dbus.Double(-1e308), dbus.Double(float("inf")), dbus.Double(float("nan")),
    dbus.String(""), dbus.String("héllo ✓ 日本 🎵"), dbus.String("quote ' and \" and \\"),
    dbus.ObjectPath("/"), dbus.ObjectPath("/org/mpris/MediaPlayer2/Track_5f1"),
    dbus.Signature(""), dbus.Signature("a{sv}(iu)aay"),
    dbus.Array([], signature="s"), dbus.Array(["a", "b", "c"], signature="s"),
    dbus.Array([dbus.Byte(b) for b in range(256)], signature="y"),
    dbus.Array([], signature="y"),
    dbus.Array([dbus.Int64(1), dbus.Int64(-2)], signature="x"),
    dbus.Array([dbus.Array([dbus.Byte(1)], signature="y"), dbus.Array([], signature="y")], signature="ay"),
    dbus.Dictionary({}, signature="sv"),
    dbus.Dictionary({"xesam:title": dbus.String("A", variant_level=1),
                     "mpris:length": dbus.Int64(5000000, variant_level=1),
                     "xesam:artist": dbus.Array(["B", "C"], signature="s", variant_level=1)}, signature="sv"),
    dbus.Dictionary({dbus.UInt32(7): dbus.Array(["x"], signature="s")}, signature="uas"),
    dbus.Dictionary({dbus.ObjectPath("/a"): dbus.Dictionary({"k": dbus.Boolean(True, variant_level=1)}, signature="sv")},
                    signature="oa{sv}"),
    dbus.Struct((dbus.Int32(1), dbus.String("x"), dbus.Double(2.5))),
    dbus.Struct((dbus.Struct((dbus.Byte(1),)), dbus.Array([dbus.Struct((dbus.String("a"), dbus.Int64(1)))], signature="(sx)"))),
    dbus.String("inside two variants", variant_level=2),
    dbus.Array([dbus.Int32(1, variant_level=1), dbus.String("two", variant_level=1)], signature="v"),
    nested_arrays(32),
]

for case in cases:
    reply = test.Echo(case)
    # dbus-python counts the argument's own variant in variant_level: a plain
    # value goes out as one variant, a value of variant_level 2 as two.
    expected_signature = signature(case) if case.variant_level else "v" + signature(case)
    if signature(reply) != expected_signature or not same(reply, case):
        failures.append("Echo %s: sent %r, got %s %r" % (expected_signature, case, signature(reply), reply))
    checked += 1

basics = (dbus.Byte(200), dbus.Boolean(True), dbus.Int16(-7), dbus.UInt16(7), dbus.Int32(-70000), dbus.UInt32(70000),
          dbus.Int64(-2**40), dbus.UInt64(2**40), dbus.Double(0.125), dbus.String("s"), dbus.ObjectPath("/o"),
          dbus.Signature("g"))
reply = test.EchoBasics(*basics)
if [signature(x) for x in reply] != list("ybnqiuxtdsog") or not same(list(reply), list(basics)):
    failures.append("EchoBasics: sent %r, got %r" % (basics, reply))
checked += 1

containers = (dbus.Array(["a", ""], signature="s"),
              dbus.Dictionary({"k": dbus.Double(1.5, variant_level=1)}, signature="sv"),
              dbus.Struct((dbus.Int32(-1), dbus.String("r"), dbus.Double(0.5))),
              dbus.Array([dbus.Array([dbus.Byte(9)], signature="y")], signature="ay"),
              dbus.Dictionary({dbus.ObjectPath("/n"): dbus.Dictionary({"t": dbus.String("x", variant_level=1)}, signature="sv")},
                              signature="oa{sv}"))
reply = test.EchoContainers(*containers)
if [signature(x) for x in reply] != ["as", "a{sv}", "(isd)", "aay", "a{oa{sv}}"] or not same(list(reply), list(containers)):
    failures.append("EchoContainers: sent %r, got %r" % (containers, reply))
checked += 1

if failures:
    print("\n".join(failures))
    sys.exit(1)
print("checked %d" % checked)
