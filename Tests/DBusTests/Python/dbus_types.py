"""Shared by the test peers: the exact D-Bus signature of a dbus-python value,
and a canonical JSON form of values for line-by-line assertions."""
import json
import dbus


def signature(value):
    """The signature dbus-python holds for `value` (variant levels become 'v')."""
    inner = _signature(value)
    return "v" * getattr(value, "variant_level", 0) + inner


def _signature(value):
    # Order matters: Boolean is an int, ObjectPath and Signature are strs.
    for kind, code in ((dbus.Boolean, "b"), (dbus.Byte, "y"), (dbus.Int16, "n"), (dbus.UInt16, "q"),
                       (dbus.Int32, "i"), (dbus.UInt32, "u"), (dbus.Int64, "x"), (dbus.UInt64, "t"),
                       (dbus.Double, "d"), (dbus.ObjectPath, "o"), (dbus.Signature, "g"), (dbus.String, "s")):
        if isinstance(value, kind):
            return code
    if isinstance(value, dbus.Dictionary):
        return "a{%s}" % value.signature
    if isinstance(value, dbus.Array):
        return "a%s" % value.signature
    if isinstance(value, dbus.Struct):
        return "(%s)" % "".join(signature(field) for field in value)
    raise TypeError("not a dbus-python value: %r" % (value,))


def plain(value):
    """Plain JSON-able Python for a dbus-python value."""
    if isinstance(value, dbus.Boolean):
        return bool(value)
    if isinstance(value, (dbus.Byte, dbus.Int16, dbus.UInt16, dbus.Int32, dbus.UInt32, dbus.Int64, dbus.UInt64)):
        return int(value)
    if isinstance(value, dbus.Double):
        return float(value)
    if isinstance(value, str):
        return str(value)
    if isinstance(value, dbus.Dictionary):
        return {str(plain(k)): plain(v) for k, v in value.items()}
    if isinstance(value, (dbus.Array, dbus.Struct, list, tuple)):
        return [plain(item) for item in value]
    return value


def line(*parts):
    return " ".join(p if isinstance(p, str) else json.dumps(p, sort_keys=True, ensure_ascii=False) for p in parts)
