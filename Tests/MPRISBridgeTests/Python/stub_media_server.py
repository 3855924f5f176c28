"""A minimal MediaServer2 provider, only to prove the Rygel harness (the daemon replaces it).

Usage: stub_media_server.py [--searchable] URL1 URL2

Owns org.gnome.UPnP.MediaServer2.Stub on the session bus and serves, with the exact property
types Rygel's External plugin expects (counts u, Duration and TrackNumber i, Size x, Parent
and Path o, URLs as):

  /org/gnome/UPnP/MediaServer2/Stub              container "Stub", one child
  /org/gnome/UPnP/MediaServer2/Stub/Music        container "Music", two children
  /org/gnome/UPnP/MediaServer2/Stub/Music/Tone1  music "Tone 1", URLs [URL1]
  /org/gnome/UPnP/MediaServer2/Stub/Music/Tone2  music "Tone 2", URLs [URL2]

An item's Size is its file's size when its URL names an existing file, else left out.

With --searchable, every container says Searchable=true and SearchObjects answers queries of
the form `PROPERTY contains|=|!= "TEXT"`, joined with `and`/`or` (no parentheses); otherwise
Searchable=false and SearchObjects fails.

Prints "READY" once the name is owned, then one line per call it receives, so a test sees what
its client asked for, in order:
  CALL <method> <object path> <arguments>      (GetAll, Get, ListChildren, SearchObjects, …)
"""

import os
import re
import sys
import urllib.parse

import dbus
import dbus.mainloop.glib
import dbus.service
from gi.repository import GLib

NAME = "org.gnome.UPnP.MediaServer2.Stub"
ROOT = "/org/gnome/UPnP/MediaServer2/Stub"
OBJECT = "org.gnome.UPnP.MediaObject2"
CONTAINER = "org.gnome.UPnP.MediaContainer2"
ITEM = "org.gnome.UPnP.MediaItem2"
PROPERTIES = "org.freedesktop.DBus.Properties"


def container(path, parent, title, containers, items, searchable):
    return {
        OBJECT: {"Parent": dbus.ObjectPath(parent), "Type": dbus.String("container"),
                 "Path": dbus.ObjectPath(path), "DisplayName": dbus.String(title)},
        CONTAINER: {"ChildCount": dbus.UInt32(len(containers) + len(items)), "ItemCount": dbus.UInt32(len(items)),
                    "ContainerCount": dbus.UInt32(len(containers)), "Searchable": dbus.Boolean(searchable)},
        "children": containers + items,
    }


def music(path, parent, title, number, url):
    item = {"URLs": dbus.Array([url], signature="s"), "MIMEType": dbus.String("audio/ogg"),
            "Artist": dbus.String("Artist"), "Album": dbus.String("Generated"), "Genre": dbus.String("Test"),
            "Duration": dbus.Int32(1), "TrackNumber": dbus.Int32(number)}
    # Rygel sends Size as the Content-Length of the file it serves: it must be the file's, exactly.
    file = urllib.parse.unquote(urllib.parse.urlsplit(url).path) if url.startswith("file://") else None
    if file and os.path.isfile(file):
        item["Size"] = dbus.Int64(os.path.getsize(file))
    return {
        OBJECT: {"Parent": dbus.ObjectPath(parent), "Type": dbus.String("music"),
                 "Path": dbus.ObjectPath(path), "DisplayName": dbus.String(title)},
        ITEM: item,
    }


def build_tree(urls, searchable):
    music_path = ROOT + "/Music"
    tones = [music_path + "/Tone1", music_path + "/Tone2"]
    return {
        ROOT: container(ROOT, ROOT, "Stub", [music_path], [], searchable),
        music_path: container(music_path, ROOT, "Music", [], tones, searchable),
        tones[0]: music(tones[0], music_path, "Tone 1", 1, urls[0]),
        tones[1]: music(tones[1], music_path, "Tone 2", 2, urls[1]),
    }


def log(*words):
    print("CALL", *words, flush=True)


def flat(entry):
    """All properties of an object, whatever the interface."""
    merged = {}
    for interface in (OBJECT, CONTAINER, ITEM):
        merged.update(entry.get(interface, {}))
    return merged


def filtered(entry, names):
    properties = flat(entry)
    if "*" in names:
        chosen = properties
    else:
        chosen = {name: properties[name] for name in names if name in properties}
    return dbus.Dictionary(chosen, signature="sv")


RELATION = re.compile(r'\s*(@?[\w:]+)\s+(contains|doesNotContain|=|!=|derivedfrom)\s+"((?:[^"\\]|\\.)*)"\s*')


def matches(properties, query):
    """`A op "x" [and|or B op "y"]…`, evaluated left to right; raises ValueError if unreadable."""
    result = None
    joiner = None
    rest = query
    while True:
        relation = RELATION.match(rest)
        if not relation:
            raise ValueError("unsupported query: " + query)
        name, op, text = relation.groups()
        value = str(properties.get(name, ""))
        hit = {"contains": text.lower() in value.lower(), "doesNotContain": text.lower() not in value.lower(),
               "=": value == text, "!=": value != text, "derivedfrom": value.startswith(text)}[op]
        result = hit if joiner is None else (result and hit if joiner == "and" else result or hit)
        rest = rest[relation.end():]
        if not rest:
            return result
        joined = re.match(r"(and|or)\s", rest)
        if not joined:
            raise ValueError("unsupported query: " + query)
        joiner = joined.group(1)
        rest = rest[joined.end():]


class Provider(dbus.service.FallbackObject):
    """Every object of the tree lives at or below ROOT: this one fallback object serves them all."""

    def __init__(self, bus, tree, searchable):
        super().__init__(bus, ROOT)
        self.tree = tree
        self.searchable = searchable

    def entry(self, path):
        if path not in self.tree:
            raise dbus.exceptions.DBusException("no object " + path, name="org.freedesktop.DBus.Error.UnknownObject")
        return self.tree[path]

    def page(self, paths, offset, max_count, names):
        paths = paths[offset:] if max_count == 0 else paths[offset:offset + max_count]
        return dbus.Array([filtered(self.tree[path], names) for path in paths], signature="a{sv}")

    @dbus.service.method(PROPERTIES, in_signature="ss", out_signature="v", path_keyword="path")
    def Get(self, interface, name, path):
        log("Get", path, interface, name)
        values = self.entry(path).get(interface, {})
        if name not in values:
            raise dbus.exceptions.DBusException(
                interface + "." + name, name="org.freedesktop.DBus.Error.UnknownProperty")
        return values[name]

    @dbus.service.method(PROPERTIES, in_signature="s", out_signature="a{sv}", path_keyword="path")
    def GetAll(self, interface, path):
        log("GetAll", path, interface)
        return dbus.Dictionary(self.entry(path).get(interface, {}), signature="sv")

    @dbus.service.method(PROPERTIES, in_signature="ssv", out_signature="", path_keyword="path")
    def Set(self, interface, name, value, path):
        log("Set", path, interface, name)
        raise dbus.exceptions.DBusException("read-only", name="org.freedesktop.DBus.Error.PropertyReadOnly")

    @dbus.service.method(CONTAINER, in_signature="uuas", out_signature="aa{sv}", path_keyword="path")
    def ListChildren(self, offset, max_count, names, path):
        log("ListChildren", path, offset, max_count, ",".join(names))
        return self.page(self.entry(path)["children"], offset, max_count, names)

    @dbus.service.method(CONTAINER, in_signature="uuas", out_signature="aa{sv}", path_keyword="path")
    def ListContainers(self, offset, max_count, names, path):
        log("ListContainers", path, offset, max_count, ",".join(names))
        children = [child for child in self.entry(path)["children"] if CONTAINER in self.tree[child]]
        return self.page(children, offset, max_count, names)

    @dbus.service.method(CONTAINER, in_signature="uuas", out_signature="aa{sv}", path_keyword="path")
    def ListItems(self, offset, max_count, names, path):
        log("ListItems", path, offset, max_count, ",".join(names))
        children = [child for child in self.entry(path)["children"] if ITEM in self.tree[child]]
        return self.page(children, offset, max_count, names)

    @dbus.service.method(CONTAINER, in_signature="suuas", out_signature="aa{sv}", path_keyword="path")
    def SearchObjects(self, query, offset, max_count, names, path):
        log("SearchObjects", path, repr(str(query)), offset, max_count, ",".join(names))
        if not self.searchable:
            raise dbus.exceptions.DBusException("not searchable", name="org.freedesktop.DBus.Error.NotSupported")
        below = [candidate for candidate in self.tree if candidate != path and candidate.startswith(path + "/")]
        try:
            found = [candidate for candidate in below if matches(flat(self.tree[candidate]), str(query))]
        except ValueError as error:
            raise dbus.exceptions.DBusException(str(error), name="org.freedesktop.DBus.Error.InvalidArgs")
        return self.page(found, offset, max_count, names)

    @dbus.service.signal(CONTAINER, signature="")
    def Updated(self):
        pass


def main():
    arguments = sys.argv[1:]
    searchable = "--searchable" in arguments
    urls = [argument for argument in arguments if argument != "--searchable"]
    if len(urls) != 2:
        sys.exit(__doc__)
    dbus.mainloop.glib.DBusGMainLoop(set_as_default=True)
    bus = dbus.SessionBus()
    provider = Provider(bus, build_tree(urls, searchable), searchable)
    name = dbus.service.BusName(NAME, bus, do_not_queue=True)
    print("READY", flush=True)
    loop = GLib.MainLoop()
    # End with the bus: a provider left behind by a crashed test dies with its bus.
    bus.call_on_disconnection(lambda connection: loop.quit())
    loop.run()
    del provider, name


if __name__ == "__main__":
    main()
