#!/usr/bin/python3
"""Compares the interfaces a running object introspects with contract XML
files, member by member and signature by signature (argument names are
documentation and not compared). Prints `match N members` or each difference.
Usage: Scripts/check-contract.py BUS_NAME PATH CONTRACT.xml [CONTRACT.xml …]"""
import sys
import xml.etree.ElementTree as ElementTree
import dbus

EMITS = "org.freedesktop.DBus.Property.EmitsChangedSignal"


def members(interface):
    """Each member as a comparable description."""
    found = {}
    for method in interface.findall("method"):
        found["method " + method.get("name")] = (
            "in=" + "".join(a.get("type") for a in method.findall("arg") if a.get("direction", "in") == "in"),
            "out=" + "".join(a.get("type") for a in method.findall("arg") if a.get("direction") == "out"))
    for signal in interface.findall("signal"):
        found["signal " + signal.get("name")] = ("args=" + "".join(a.get("type") for a in signal.findall("arg")),)
    for prop in interface.findall("property"):
        emits = [a.get("value") for a in prop.findall("annotation") if a.get("name") == EMITS]
        found["property " + prop.get("name")] = (prop.get("type"), prop.get("access"), "emits=" + (emits[0] if emits else "true"))
    return found


bus_name, path, contracts = sys.argv[1], sys.argv[2], sys.argv[3:]
live = ElementTree.fromstring(
    dbus.SessionBus().get_object(bus_name, path).Introspect(dbus_interface="org.freedesktop.DBus.Introspectable"))
live_interfaces = {i.get("name"): members(i) for i in live.findall("interface")}
differences, compared = [], 0
for contract_file in contracts:
    for interface in ElementTree.parse(contract_file).getroot().findall("interface"):
        name = interface.get("name")
        expected = members(interface)
        actual = live_interfaces.get(name)
        if actual is None:
            differences.append("%s: not served" % name)
            continue
        for member in sorted(set(expected) | set(actual)):
            compared += 1
            if expected.get(member) != actual.get(member):
                differences.append("%s %s: contract %s, served %s" % (name, member, expected.get(member), actual.get(member)))
if differences:
    print("\n".join(differences))
    sys.exit(1)
print("match %d members" % compared)
