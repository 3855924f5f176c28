"""A head unit browsing an app's playable content (the media tree), for the MediaPlayer tests.

Usage: content_client.py BUS_NAME ROOT_PATH OPERATION [ARG ...] [-- OPERATION ...]
Operations (paths are relative to ROOT_PATH and escaped, "" for the root; each prints lines):
  walk                 lists every container (ListChildren, all rows, every property), depth first,
                       one line per row: "PATH|DisplayName|Subtitle|flags|progress"; then
                       "problems N" (rows whose ChildCount differs from the rows listed, or whose
                       DisplayName differs when read on their own object)
  list PATH            one line: the rows' "DisplayName|flags", or "(empty)"
  get PATH INTERFACE PROPERTY
  limits ENFORCED ITEMS DEPTH        MediaRoot1.SetContentLimits; prints "set"
  set PATH INTERFACE PROPERTY TYPE VALUE  TYPE b|u; prints "set"
  play PATH            MediaNode1.Play; prints "played", or "error NAME MESSAGE"
  playat OBJECT_PATH   the same on any object path, absolute
  prepare [PATH ...]   MediaRoot1.PrepareQueue; prints "prepared", or "error NAME MESSAGE"
Errors print as "error NAME MESSAGE".
"""
import sys

import dbus

OBJECT = "org.gnome.UPnP.MediaObject2"
CONTAINER = "org.gnome.UPnP.MediaContainer2"
NODE = "org.mprisbridge.MediaNode1"
ROOT = "org.mprisbridge.MediaRoot1"
PROPERTIES = "org.freedesktop.DBus.Properties"
FLAGS = ["Playable", "Container", "Informative", "Loading", "NowPlaying", "Streaming", "Explicit", "DisplaysPlaybackProgress"]

bus = dbus.SessionBus()
bus_name, root = sys.argv[1], sys.argv[2]


def full(path):
    return root if path == "" else root + "/" + path


def obj(path):
    return bus.get_object(bus_name, path, introspect=False)


def flags(entry):
    return ",".join(n for n in FLAGS if entry.get(n))


def walk():
    problems = 0

    def visit(path):
        nonlocal problems
        listed = dbus.Interface(obj(path), CONTAINER).ListChildren(dbus.UInt32(0), dbus.UInt32(0), ["*"])
        if int(dbus.Interface(obj(path), PROPERTIES).Get(CONTAINER, "ChildCount")) != len(listed):
            problems += 1
        for entry in listed:
            child = str(entry["Path"])
            if dbus.Interface(obj(child), PROPERTIES).Get(OBJECT, "DisplayName") != entry["DisplayName"]:
                problems += 1
            print("%s|%s|%s|%s|%g" % (child[len(root) + 1:], entry["DisplayName"], entry.get("Subtitle", ""), flags(entry),
                                      float(entry.get("PlaybackProgress", -1))))
            if entry.get("Container"):
                visit(child)

    visit(root)
    print("problems %d" % problems)


def run(op, args):
    if op == "walk":
        walk()
    elif op == "list":
        entries = dbus.Interface(obj(full(args[0])), CONTAINER).ListChildren(dbus.UInt32(0), dbus.UInt32(0), ["*"])
        print(" ".join("%s|%s" % (e["DisplayName"], flags(e)) for e in entries) if entries else "(empty)")
    elif op == "get":
        value = dbus.Interface(obj(full(args[0])), PROPERTIES).Get(args[1], args[2])
        print(value.__class__.__name__, value)
    elif op == "limits":
        dbus.Interface(obj(root), ROOT).SetContentLimits(args[0] == "true", dbus.UInt32(int(args[1])), dbus.UInt32(int(args[2])))
        print("set")
    elif op == "set":
        value = dbus.Boolean(args[4] == "true", variant_level=1) if args[3] == "b" else dbus.UInt32(int(args[4]), variant_level=1)
        dbus.Interface(obj(full(args[0])), PROPERTIES).Set(args[1], args[2], value)
        print("set")
    elif op in ("play", "playat"):
        dbus.Interface(obj(full(args[0]) if op == "play" else args[0]), NODE).Play(timeout=60)
        print("played")
    elif op == "prepare":
        items = dbus.Array([dbus.ObjectPath(full(p)) for p in args], signature="o")
        dbus.Interface(obj(root), ROOT).PrepareQueue(items, timeout=60)
        print("prepared")
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
        print("error %s %s" % (error.get_dbus_name(), error.get_dbus_message()))
    sys.stdout.flush()
