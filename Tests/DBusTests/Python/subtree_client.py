"""Walks the Swift service's 100,000-node subtree like a browsing client:
lists the children by introspection, then calls and reads a few nodes.
Prints one line per observation."""
import sys
import xml.etree.ElementTree as ElementTree
import dbus

bus = dbus.SessionBus()
name = "org.mprisbridge.Test"


def introspect(path):
    return ElementTree.fromstring(bus.get_object(name, path, introspect=False).Introspect(dbus_interface="org.freedesktop.DBus.Introspectable"))


root = introspect("/org/mprisbridge/Tree")
children = [node.get("name") for node in root.findall("node")]
print("children", len(children), children[0], children[-1])
print("root interfaces", sorted(i.get("name") for i in root.findall("interface") if not i.get("name").startswith("org.freedesktop")))
print("parent lists", [n.get("name") for n in introspect("/org/mprisbridge").findall("node")])
for index in (0, 54321, 99999):
    # introspect=False: call the node directly, as a head unit that knows the interface does.
    proxy = bus.get_object(name, "/org/mprisbridge/Tree/n%d" % index, introspect=False)
    node = dbus.Interface(proxy, "org.mprisbridge.Node1")
    properties = dbus.Interface(proxy, "org.freedesktop.DBus.Properties")
    print("node", index, int(node.Index()), str(properties.Get("org.mprisbridge.Node1", "Label")))
leaf = introspect("/org/mprisbridge/Tree/n7")
print("leaf", [i.get("name") for i in leaf.findall("interface")][-1], len(leaf.findall("node")))
try:
    bus.get_object(name, "/org/mprisbridge/Tree/n100000", introspect=False).Index(dbus_interface="org.mprisbridge.Node1")
except dbus.DBusException as error:
    print("missing", error.get_dbus_name())
