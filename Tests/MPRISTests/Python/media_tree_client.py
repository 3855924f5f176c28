"""A head unit browsing a MediaServer2 tree, for the media-tree tests.

Usage: media_tree_client.py BUS_NAME ROOT_PATH OPERATION [ARG ...] [-- OPERATION ...]
Operations (paths are relative to ROOT_PATH, "" for the root; each prints one line):
  walk PAGE            lists every container in pages of PAGE, checks paths, parents, types and counts,
                       reads each node's properties directly, and prints totals
  list PATH OFFSET MAX [KIND] [PROP,...]  KIND children|containers|items; prints "Title|Type|flags" rows
  get PATH INTERFACE PROPERTY
  set PATH INTERFACE PROPERTY TYPE VALUE  TYPE b|u
  search PATH QUERY OFFSET MAX       SearchObjects; prints titles
  text PATH TEXT OFFSET MAX          MediaNode1.Search; prints titles
  hostile PATH SHAPE N               SearchObjects of a query built here: SHAPE "terms" joins N relations with
                                     and/or, "nested" nests one in N parentheses, "long" is a title of N
                                     characters, "text" is MediaNode1.Search of N characters; prints the
                                     titles, or "error NAME" and the message's length in bytes
  play PATH                          prints "played" or the error name, and the milliseconds taken
  slow PATH                          lists, then waits for Updated on PATH and lists again
  introspect PATH                    prints interfaces and the number of child nodes
  prepare [PATH ...]                 MediaRoot1.PrepareQueue of these nodes (absolute if starting with /); prints "prepared"
  rescan                             MediaRoot1.Rescan; prints "rescanned in N ms" once it replies
  action PATH ACTION                 MediaNode1.PerformAction; prints "done" or "error NAME"
Errors of single operations print as "error NAME".
"""
import sys
import time

import dbus
import dbus.mainloop.glib
from gi.repository import GLib

OBJECT = "org.gnome.UPnP.MediaObject2"
CONTAINER = "org.gnome.UPnP.MediaContainer2"
ITEM = "org.gnome.UPnP.MediaItem2"
NODE = "org.mprisbridge.MediaNode1"
ROOT = "org.mprisbridge.MediaRoot1"
PROPERTIES = "org.freedesktop.DBus.Properties"

dbus.mainloop.glib.DBusGMainLoop(set_as_default=True)
bus = dbus.SessionBus()
bus_name, root = sys.argv[1], sys.argv[2]


def full(path):
    return root if path == "" else root + "/" + path


def obj(path):
    return bus.get_object(bus_name, full(path), introspect=False)


def flags(entry):
    names = ["Playable", "Container", "Informative", "Loading", "NowPlaying", "Streaming", "Explicit"]
    return ",".join(n for n in names if entry.get(n))


def row(entry):
    return "%s|%s|%s" % (entry.get("DisplayName"), entry.get("Type"), flags(entry))


def walk(page):
    """Browses everything as a head unit would, checking what it sees."""
    problems, nodes, containers, items, depth_max, calls = [], 0, 0, 0, 0, 0
    queue = [(root, 0)]
    while queue:
        path, depth = queue.pop(0)
        container = dbus.Interface(bus.get_object(bus_name, path, introspect=False), CONTAINER)
        props = dbus.Interface(bus.get_object(bus_name, path, introspect=False), PROPERTIES)
        listed, offset = [], 0
        while True:
            chunk = container.ListChildren(dbus.UInt32(offset), dbus.UInt32(page), ["*"])
            calls += 1
            if len(chunk) > page:
                problems.append("%s: page of %d rows for Max %d" % (path, len(chunk), page))
            listed += chunk
            offset += len(chunk)
            if len(chunk) < page:
                break
        # Counts are read after listing, as a container still loading shows its loading row
        # only once a listing has stopped waiting for it.
        expected = int(props.Get(CONTAINER, "ChildCount"))
        counts = props.GetAll(CONTAINER)
        if "ItemCount" in counts and counts["ItemCount"] + counts["ContainerCount"] != expected:
            problems.append("%s: ItemCount + ContainerCount != ChildCount" % path)
        if len(listed) != expected:
            problems.append("%s: listed %d, ChildCount %d" % (path, len(listed), expected))
        for entry in listed:
            nodes += 1
            child = str(entry["Path"])
            if str(entry["Parent"]) != path or not child.startswith(path + "/") or "/" in child[len(path) + 1:]:
                problems.append("%s: bad path or parent under %s" % (child, path))
            if entry["Type"] == "container" and entry.get("Container"):
                containers += 1
                depth_max = max(depth_max, depth + 1)
                queue.append((child, depth + 1))
            elif entry["Type"] in ("music", "audio"):
                items += 1
                if not entry.get("URLs") or "MIMEType" not in entry:
                    problems.append("%s: item without URLs or MIMEType" % child)
            direct = dbus.Interface(bus.get_object(bus_name, child, introspect=False), PROPERTIES)
            if direct.Get(OBJECT, "DisplayName") != entry["DisplayName"]:
                problems.append("%s: DisplayName differs when read directly" % child)
    print("nodes %d containers %d items %d depth %d calls %d problems %d" % (nodes, containers, items, depth_max, calls, len(problems)))
    for problem in problems[:10]:
        print("problem " + problem)


def run(op, args):
    if op == "walk":
        walk(int(args[0]))
    elif op == "list":
        path, offset, maximum = args[0], int(args[1]), int(args[2])
        kind = args[3] if len(args) > 3 else "children"
        names = args[4].split(",") if len(args) > 4 else ["*"]
        method = {"children": "ListChildren", "containers": "ListContainers", "items": "ListItems"}[kind]
        entries = getattr(dbus.Interface(obj(path), CONTAINER), method)(dbus.UInt32(offset), dbus.UInt32(maximum), names)
        if len(args) > 4:
            print(" ".join(",".join(sorted(str(k) for k in e.keys())) for e in entries))
        else:
            print(" ".join(row(e) for e in entries) if entries else "(empty)")
    elif op == "get":
        value = dbus.Interface(obj(args[0]), PROPERTIES).Get(args[1], args[2])
        print(value.__class__.__name__, value if not isinstance(value, list) else list(map(str, value)))
    elif op == "set":
        value = dbus.Boolean(args[4] == "true", variant_level=1) if args[3] == "b" else dbus.UInt32(int(args[4]), variant_level=1)
        dbus.Interface(obj(args[0]), PROPERTIES).Set(args[1], args[2], value)
        print("set")
    elif op == "search":
        found = dbus.Interface(obj(args[0]), CONTAINER).SearchObjects(args[1], dbus.UInt32(int(args[2])), dbus.UInt32(int(args[3])), ["DisplayName", "Path"])
        print(" ".join(str(e["DisplayName"]) for e in found) if found else "(none)")
    elif op == "hostile":
        shape, count = args[1], int(args[2])
        relation = 'DisplayName = "Song 1.1"'
        query = {
            "terms": lambda: " and ".join([relation] * (count // 2)) + " or " + " or ".join([relation] * (count - count // 2)),
            "nested": lambda: "(" * count + relation + ")" * count,
            "long": lambda: 'DisplayName = "' + "x" * count + '"',
            "text": lambda: "x" * count,
        }[shape]()
        try:
            if shape == "text":
                found = dbus.Interface(obj(args[0]), NODE).Search(query, dbus.UInt32(0), dbus.UInt32(0), ["DisplayName"])
            else:
                found = dbus.Interface(obj(args[0]), CONTAINER).SearchObjects(query, dbus.UInt32(0), dbus.UInt32(0), ["DisplayName"])
            print(" ".join(str(e["DisplayName"]) for e in found) if found else "(none)")
        except dbus.exceptions.DBusException as error:
            print("error %s %d" % (error.get_dbus_name(), len(error.get_dbus_message().encode())))
    elif op == "text":
        found = dbus.Interface(obj(args[0]), NODE).Search(args[1], dbus.UInt32(int(args[2])), dbus.UInt32(int(args[3])), ["DisplayName", "Path"])
        print(" ".join(str(e["DisplayName"]) for e in found) if found else "(none)")
    elif op == "play":
        start = time.monotonic()
        try:
            dbus.Interface(obj(args[0]), NODE).Play(timeout=20)
            result = "played"
        except dbus.exceptions.DBusException as error:
            result = "error " + error.get_dbus_name()
        print("%s %d" % (result, (time.monotonic() - start) * 1000))
    elif op == "slow":
        updated = []
        loop = GLib.MainLoop()

        def on_updated(path=None):
            updated.append(path)
            loop.quit()

        bus.add_signal_receiver(on_updated, signal_name="Updated", dbus_interface=CONTAINER, path=full(args[0]), path_keyword="path")
        start = time.monotonic()
        first = dbus.Interface(obj(args[0]), CONTAINER).ListChildren(dbus.UInt32(0), dbus.UInt32(0), ["*"])
        took = (time.monotonic() - start) * 1000
        GLib.timeout_add(10000, loop.quit)
        loop.run()
        second = dbus.Interface(obj(args[0]), CONTAINER).ListChildren(dbus.UInt32(0), dbus.UInt32(0), ["*"])
        print("first %d ms: %s" % (took, " ".join(row(e) for e in first)))
        print("updated %d; then: %s" % (len(updated), " ".join(row(e) for e in second)))
    elif op == "prepare":
        items = dbus.Array([dbus.ObjectPath(p if p.startswith("/") else full(p)) for p in args], signature="o")
        dbus.Interface(obj(""), ROOT).PrepareQueue(items)
        print("prepared")
    elif op == "rescan":
        started = time.monotonic()
        dbus.Interface(obj(""), ROOT).Rescan(timeout=120)
        print("rescanned in %d ms" % ((time.monotonic() - started) * 1000))
    elif op == "action":
        try:
            dbus.Interface(obj(args[0]), NODE).PerformAction(args[1], timeout=20)
            print("done")
        except dbus.exceptions.DBusException as error:
            print("error " + error.get_dbus_name())
    elif op == "introspect":
        xml = dbus.Interface(obj(args[0]), "org.freedesktop.DBus.Introspectable").Introspect()
        import xml.etree.ElementTree as ET
        tree = ET.fromstring(xml)
        names = [i.get("name") for i in tree.findall("interface") if not i.get("name").startswith("org.freedesktop.")]
        print(" ".join(names), len(tree.findall("node")))
    else:
        raise SystemExit("unknown operation " + op)


operations, current = [], []
for arg in sys.argv[3:]:
    if arg == "--":
        operations.append(current)
        current = []
    else:
        current.append(arg)
operations.append(current)
for operation in operations:
    try:
        run(operation[0], operation[1:])
    except dbus.exceptions.DBusException as error:
        print("error " + error.get_dbus_name())
        print("%s: %s" % (operation[0], error.get_dbus_message()), file=sys.stderr)
    sys.stdout.flush()
