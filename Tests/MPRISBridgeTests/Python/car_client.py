"""A car's browse screen over the media tree, for the car-layout tests.

Usage: car_client.py BUS_NAME ROOT_PATH drive|park
Sets the root's ContentLimitsEnforced (true while driving), then browses as a car does: the
root's tabs, every row of each tab and of every container below, as deep as the tree lets it,
reading every property. Prints one JSON object:
  tabs           the root's tabs' titles, in order
  recent         the Recent tab's rows' titles
  longestList    the most rows one listing gave
  longestText    the longest text a row showed, in characters, and that text
  deepest        the deepest level that listed rows (the root's children are level 1)
  styles         per tab title: [BrowsableStyle, PlayableStyle]; and "album": the first album's
  trackHints     the display hints any track row of a listing carried (rows leave out those they lack)
"""
import json
import sys

import dbus

CONTAINER = "org.gnome.UPnP.MediaContainer2"
ROOT = "org.mprisbridge.MediaRoot1"
PROPERTIES = "org.freedesktop.DBus.Properties"
# What a car shows as text (not paths, URLs or identifiers).
TEXTS = ("DisplayName", "Subtitle", "Artist", "Album", "Genre", "GroupTitle", "ResolutionLabel")

bus = dbus.SessionBus()
bus_name, root, mode = sys.argv[1], sys.argv[2], sys.argv[3]


def node(path):
    return bus.get_object(bus_name, path, introspect=False)


def children(path):
    return dbus.Interface(node(path), CONTAINER).ListChildren(dbus.UInt32(0), dbus.UInt32(0), ["*"])


dbus.Interface(node(root), PROPERTIES).Set(ROOT, "ContentLimitsEnforced", dbus.Boolean(mode == "drive", variant_level=1))
result = {"longestList": 0, "longestText": [0, ""], "deepest": 0, "styles": {}, "trackHints": []}
HINTS = ("BrowsableStyle", "PlayableStyle", "GroupTitle", "CompletionStatus", "ErrorCode", "ResolutionAction",
         "ResolutionLabel", "Actions")
tabs = [row for row in children(root) if row["Container"]]
result["tabs"] = [str(tab["DisplayName"]) for tab in tabs]
for tab in tabs:
    result["styles"][str(tab["DisplayName"])] = [str(tab.get("BrowsableStyle", "")), str(tab.get("PlayableStyle", ""))]

pending = [(str(tab["Path"]), 1) for tab in tabs]
seen = 0
while pending and seen < 2000:
    path, depth = pending.pop(0)
    rows = children(path)
    seen += 1
    if rows:
        result["deepest"] = max(result["deepest"], depth + 1)
    result["longestList"] = max(result["longestList"], len(rows))
    if path == str(tabs[0]["Path"]) and result["tabs"][0] == "Recent":
        result["recent"] = [str(row["DisplayName"]) for row in rows]
    for row in rows:
        for name in TEXTS:
            text = str(row.get(name, ""))
            if len(text) > result["longestText"][0]:
                result["longestText"] = [len(text), text]
        if not row["Container"]:
            result["trackHints"] = sorted(set(result["trackHints"]) | {name for name in HINTS if name in row})
        if row["Container"]:
            if "album" not in result["styles"] and row["Identifier"].startswith("album:"):
                result["styles"]["album"] = [str(row.get("BrowsableStyle", "")), str(row.get("PlayableStyle", ""))]
            pending.append((str(row["Path"]), depth + 1))
print(json.dumps(result))
