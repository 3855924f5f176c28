"""A remote walking the daemon's media tree over and over, checking that every reply is about
the node it asked for, for the stress tests of a tree that changes while it is browsed.

Usage: tree_walker.py BUS_NAME ROOT_PATH PAGE SEED
Walks the tree from the root, each container page by page (ListChildren with PAGE rows), and
now and then reads a row's properties on its own (GetAll on its object), until its standard
input closes; then prints one JSON object:
  walks, listed, refused  whole walks made, pages answered, calls refused (a row gone for the
                          moment: UnknownObject, NoSuchContent)
  problems                the first 20 replies that were wrong: a row whose Parent or Path is
                          not the container listed, an album not of the artist listed, a track
                          not of the album listed, or an error other than a refusal (the daemon
                          gone: NoReply, ServiceUnknown)
"""
import json
import os
import random
import select
import sys

import dbus

CONTAINER = "org.gnome.UPnP.MediaContainer2"
OBJECT = "org.gnome.UPnP.MediaObject2"
PROPERTIES = "org.freedesktop.DBus.Properties"
REFUSALS = ("UnknownObject", "NoSuchContent", "UnknownMethod")
FIELDS = ["Path", "Parent", "DisplayName", "Identifier", "Type", "Album"]

bus = dbus.SessionBus()
bus_name, root, page, seed = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
rng = random.Random(seed)
stats = {"walks": 0, "listed": 0, "refused": 0, "problems": []}


def problem(text):
    if len(stats["problems"]) < 20:
        stats["problems"].append(text)


def refusal(error):
    return any(name in error.get_dbus_name() for name in REFUSALS)


def stopped():
    readable, _, _ = select.select([sys.stdin], [], [], 0)
    return bool(readable) and os.read(sys.stdin.fileno(), 1) == b""


def check(container, identifier, row):
    path, name = str(row.get("Path", "")), str(row.get("Identifier", ""))
    if str(row.get("Parent", "")) != container or path.rsplit("/", 1)[0] != container:
        problem("%s listed %s with Parent %s" % (container, path, row.get("Parent")))
    # The daemon's identifiers say where a row belongs: artist:A, album:A<US>B, track:file.
    if identifier.startswith("artist:") and name.startswith("album:"):
        if not name[len("album:"):].startswith(identifier[len("artist:"):] + "\x1f"):
            problem("the artist %s listed the album %s" % (identifier, name))
    if identifier.startswith("album:") and name.startswith("track:"):
        album = identifier.split("\x1f", 1)[-1]
        if str(row.get("Album", "")) != album:
            problem("the album %s listed %s of the album %s" % (identifier, name, row.get("Album")))


def walk():
    pending = [(root, "")]
    while pending:
        if stopped():
            return False
        container, identifier = pending.pop(0)
        offset = 0
        while True:
            try:
                rows = dbus.Interface(bus.get_object(bus_name, container, introspect=False), CONTAINER).ListChildren(
                    dbus.UInt32(offset), dbus.UInt32(page), FIELDS, timeout=20)
            except dbus.DBusException as error:
                if refusal(error):
                    stats["refused"] += 1
                else:
                    problem("ListChildren %s: %s" % (container, error.get_dbus_name()))
                break
            stats["listed"] += 1
            for row in rows:
                check(container, identifier, row)
                if row.get("Type") == "container" and str(row.get("Identifier", "")) != "":
                    pending.append((str(row["Path"]), str(row["Identifier"])))
                if rng.random() < 0.1:
                    # A row looked up on its own: the object is found afresh for this call.
                    try:
                        node = bus.get_object(bus_name, str(row["Path"]), introspect=False)
                        props = dbus.Interface(node, PROPERTIES).GetAll(OBJECT, timeout=20)
                        if str(props.get("Path", "")) != str(row["Path"]):
                            problem("%s answered as %s" % (row["Path"], props.get("Path")))
                    except dbus.DBusException as error:
                        if refusal(error):
                            stats["refused"] += 1
                        else:
                            problem("GetAll %s: %s" % (row["Path"], error.get_dbus_name()))
            offset += page
            if len(rows) < page:
                break
    return True


while walk():
    stats["walks"] += 1
print(json.dumps(stats))
