"""A hostile client of mpris-bridge: derives calls from the daemon's introspection and sends
malformed and hostile ones, checking after each batch that the daemon is alive and answering.

Usage: fuzz_daemon.py --pid PID [--name mprisbridge] [--calls N] [--seed S] [--batch B]
                      [--max-rss-growth-kb K] [--json FILE] [--trace FILE] [--skip INTERFACE.MEMBER ...]
                      [--restart-command CMD] [--no-findings-fail]
On the bus of DBUS_SESSION_BUS_ADDRESS (or --address). Prints a summary: calls, calls/s, replies
by error name, timeouts (no reply within 5 s), crashes, the slowest reply, RSS growth, and the
findings: replies that break a promise of the contract or SECURITY.md without crashing (a wrong
signature or a wrong-typed or read-only property write accepted, an error message over 1 KiB, a
file that is not audio opened, an object answering at a path that names no node, a reply naming
a system file). Each crash and finding comes with a reproducer: a Python snippet of one call.

Exits 1 on a crash, a timeout, a dead or slow liveness check, a finding (unless
--no-findings-fail), or RSS growth past the limit, measured from the end of a warm-up (the first
tenth of the calls, --warmup to change it: the tree's copy, each format's decoder and malloc's
arenas fill there, and stay).

A crash ends the run unless --restart-command is given: a shell command that starts a fresh
daemon on the same bus and prints its pid as the last line of its output. The fuzzer then
replays the crashed batch on the fresh daemon, one call at a time, to find the call that kills
it, confirms that call alone kills another fresh daemon, records it, and carries on.

Run with /usr/bin/python3 (python3-dbus). Never calls Quit.
"""
import argparse
import json
import os
import random
import subprocess
import sys
import time
import xml.etree.ElementTree as ElementTree

import dbus
import dbus.lowlevel

TIMEOUT = 5.0
MPRIS_PATH = "/org/mpris/MediaPlayer2"
SKIPPED = {("org.mpris.MediaPlayer2", "Quit")}
PEER = "org.freedesktop.DBus.Peer"
INTROSPECTABLE = "org.freedesktop.DBus.Introspectable"
PROPERTIES = "org.freedesktop.DBus.Properties"
# SECURITY.md: "an error message: 1 KiB".
MAX_ERROR_MESSAGE = 1024
# Files a reply must never name, whatever was asked.
SYSTEM_FILES = ("/etc/passwd", "/etc/shadow", "/proc/self", "/dev/zero", "/dev/urandom")
# URIs that OpenUri and AddTrack must refuse: not a regular audio file, or not a URI at all.
# Streams (http on a refused loopback port) are accepted and fail later: not listed.
REFUSED_URIS = [
    "file:///etc/passwd", "file:///etc/shadow", "file:///dev/zero", "file:///dev/urandom",
    "file:///proc/self/environ", "file:///proc/self/mem", "file:///", "file:///tmp",
    "file:///nonexistent/a.ogg", "file://%2e%2e/etc/passwd", "file:///../../etc/passwd",
    "file:///etc/passwd%00.mp3", "file:etc/passwd", "../../etc/passwd", "a.mp3",
    "data:audio/ogg;base64,AAAA", "javascript:alert(1)", "ftp://127.0.0.1/x", "", ":",
    "not a uri", "file:" + "/a" * 5000,
]
STREAM_URIS = ["http://127.0.0.1:1/stream.mp3", "https://127.0.0.1:1/x.ogg", "http://[::1]:1/a",
               "http://" + "x" * 70000]
BASIC_TYPES = "ybnqiuxtdsog"


def rss_kb(pid):
    try:
        with open("/proc/%d/status" % pid) as status:
            for line in status:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
    except OSError:
        return None
    return None


def alive(pid):
    try:
        os.kill(pid, 0)
    except OSError:
        return False
    # A zombie has exited: it is dead to us.
    try:
        with open("/proc/%d/stat" % pid) as stat:
            return stat.read().split(") ")[1][0] != "Z"
    except OSError:
        return False


def dead_within(pid, seconds):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if not alive(pid):
            return True
        time.sleep(0.05)
    return not alive(pid)


def split_signature(signature):
    """The complete types of a signature: 'sa{sv}(ii)' -> ['s', 'a{sv}', '(ii)']."""
    types, index = [], 0
    while index < len(signature):
        end = single_type_end(signature, index)
        types.append(signature[index:end])
        index = end
    return types


def single_type_end(signature, index):
    code = signature[index]
    if code == "a":
        return single_type_end(signature, index + 1)
    if code in "({":
        depth = 0
        while True:
            if signature[index] in "({":
                depth += 1
            elif signature[index] in ")}":
                depth -= 1
                if depth == 0:
                    return index + 1
            index += 1
    return index + 1


def escape_element(text):
    """ObjectPath.escapeElement: what an old cover object's path carried its URL as."""
    return "".join(chr(b) if chr(b).isalnum() and b < 128 else "_%02x" % b for b in text.encode())


def with_level(value, level):
    """The value wrapped in `level` variants (dbus-python's values are immutable)."""
    if isinstance(value, dbus.Dictionary):
        return dbus.Dictionary(value, signature=value.signature, variant_level=level)
    if isinstance(value, dbus.Array):
        return dbus.Array(value, signature=value.signature, variant_level=level)
    if isinstance(value, dbus.Struct):
        return dbus.Struct(value, variant_level=level)
    return type(value)(value, variant_level=level)


def literal(value):
    """Python source for a value as dbus-python sends it, long repetitive strings folded."""
    level = getattr(value, "variant_level", 0)
    suffix = ", variant_level=%d" % level if level else ""
    if isinstance(value, dbus.Dictionary):
        items = ", ".join("%s: %s" % (literal(k), literal(v)) for k, v in value.items())
        return "dbus.Dictionary({%s}, signature=%r%s)" % (items, str(value.signature or ""), suffix)
    if isinstance(value, dbus.Array):
        return "dbus.Array(%s, signature=%r%s)" % (fold_list([literal(v) for v in value]), str(value.signature or ""), suffix)
    if isinstance(value, dbus.Struct):
        return "dbus.Struct((%s,)%s)" % (", ".join(literal(v) for v in value), suffix)
    if isinstance(value, dbus.ByteArray):
        return "dbus.ByteArray(%s%s)" % (fold_string(bytes(value)), suffix)
    if isinstance(value, (dbus.String, dbus.ObjectPath, dbus.Signature)):
        return "dbus.%s(%s%s)" % (type(value).__name__, fold_string(str(value)), suffix)
    if isinstance(value, dbus.Double):
        number = float(value)
        text = repr(number) if number == number and abs(number) != float("inf") else "float(%r)" % repr(number)
        return "dbus.Double(%s%s)" % (text, suffix)
    if isinstance(value, dbus.Boolean):
        return "dbus.Boolean(%s%s)" % (bool(value), suffix)
    if isinstance(value, (dbus.Byte, dbus.Int16, dbus.UInt16, dbus.Int32, dbus.UInt32, dbus.Int64, dbus.UInt64)):
        return "dbus.%s(%d%s)" % (type(value).__name__, int(value), suffix)
    # Plain Python values, which dbus-python converts by the signature.
    if isinstance(value, str):
        return fold_string(value)
    if isinstance(value, (bytes, bool, int, float)):
        return repr(value)
    if isinstance(value, (list, tuple)):
        return fold_list([literal(v) for v in value])
    if isinstance(value, dict):
        return "{%s}" % ", ".join("%s: %s" % (literal(k), literal(v)) for k, v in value.items())
    raise TypeError("no literal for %r" % type(value))


def fold_list(items):
    if len(items) > 3 and all(item == items[0] for item in items):
        return "[%s] * %d" % (items[0], len(items))
    return "[%s]" % ", ".join(items)


def fold_string(text):
    """'((((x))' -> "'(' * 4 + 'x' + ')' * 2": runs of a repeated unit (up to 40 characters)."""
    if len(text) < 120:
        return repr(text)
    parts, literal_run, index = [], text[:0], 0
    while index < len(text):
        best_unit, best_count = None, 0
        for size in range(1, 41):
            unit = text[index:index + size]
            if len(unit) < size:
                break
            count = 1
            while text[index + count * size:index + (count + 1) * size] == unit:
                count += 1
            if count >= 3 and count * size > best_count * len(best_unit or " ") and count * size >= 24:
                best_unit, best_count = unit, count
        if best_unit is None:
            literal_run += text[index:index + 1]
            index += 1
            continue
        if literal_run:
            parts.append(repr(literal_run))
            literal_run = text[:0]
        parts.append("%r * %d" % (best_unit, best_count))
        index += best_count * len(best_unit)
    if literal_run:
        parts.append(repr(literal_run))
    return " + ".join(parts)


class Call:
    """One message to send, kept so that it can be sent again and shown as a reproducer."""

    def __init__(self, bus_name, path, interface, member, signature, values, target=None, check=None):
        self.bus_name, self.path, self.interface, self.member = bus_name, path, interface, member
        self.signature, self.values, self.target = signature, values, target
        # What a success reply would break (a finding), or None: (kind, detail).
        self.check = check

    def message(self):
        message = dbus.lowlevel.MethodCallMessage(self.bus_name, self.path, self.interface, self.member)
        if self.signature:
            message.append(*self.values, signature=self.signature)
        return message

    def describe(self):
        shown = ", ".join(repr(value)[:80] for value in self.values) if self.signature else ""
        return "%s %s %s.%s (%s) %s" % (self.bus_name, self.path[:120], self.interface, self.member, self.signature,
                                        shown)

    def reproducer(self):
        """Five lines of Python that send this call on the session bus and print the outcome."""
        arguments = ", ".join(literal(value) for value in self.values)
        append = "m.append(%s, signature=%r); " % (arguments, self.signature) if self.signature else ""
        return ("/usr/bin/python3 -c \"$(cat <<'EOF'\n"
                "import dbus, dbus.lowlevel\n"
                "m = dbus.lowlevel.MethodCallMessage(%r, %r, %r, %r)\n"
                "%s\n"
                "r = dbus.SessionBus().send_message_with_reply_and_block(m, 5)\n"
                "print(r.get_args_list())\n"
                "EOF\n)\"") % (self.bus_name, self.path, self.interface, self.member, append or "pass")


class Hostile:
    """Values that break assumptions, for a type and for what the argument is named."""

    def __init__(self, rng, root, tracks, nodes, huge_array=200000):
        self.rng = rng
        self.huge_array = huge_array
        self.root = root
        self.tracks = tracks
        self.nodes = nodes
        self.last_path_missing = False
        escaped = [escape_element(url) for url in ("file:///etc/shadow", "file:///etc/passwd", "file:///proc/self/environ",
                                                   "/etc/passwd", "../../../../etc/passwd")]
        # Paths that name no node: an object answering there is a finding.
        self.missing_paths = (
            [root + "/__art/" + e for e in escaped] + [n + "/__art/" + escaped[0] for n in nodes[1:4]]
            + [root + "/__art/__art", root + "/_" + "_" * 10, root + "/zz/yy/xx", root + "/" + "/".join(["a"] * 200),
               root + "/_2e_2e/_2e_2e/etc", root + "/" + "x" * 20000, root + "Suffix", root + "/__art/x/y"]
            + [n + "/nochild" for n in nodes[1:4]])

    def string(self, hint="", depth=0):
        r = self.rng.random()
        hint = hint.lower()
        if ("uri" in hint or hint == "url") and r < 0.7:
            return self.rng.choice(REFUSED_URIS + STREAM_URIS + self.tracks[:5])
        if ("query" in hint or "criteria" in hint) and r < 0.7:
            relation = 'DisplayName contains "a"'
            count = self.rng.choice([2, 63, 64, 65, 1000, 5000])
            nesting = self.rng.choice([15, 16, 17, 1000, 10000])
            return self.rng.choice([
                " and ".join([relation] * count), " or ".join([relation] * count),
                " and ".join(["(%s or %s)" % (relation, relation)] * count),
                "(" * nesting + relation + ")" * nesting, "(" * nesting + relation,
                'DisplayName = "' + "x" * 70000 + '"', '"unterminated', 'DisplayName = "unterminated', "((", "))",
                "*", "and or", "", "(" * 100000, 'Type derivedfrom "' + "\\" * 5000,
                'upnp:class derivedfrom "object.item"', 'Artist exists maybe', "Bitrate > \"1\"",
                'DisplayName contains "' + "é" * 2000 + '"',
            ])
        if hint == "sortby" and r < 0.7:
            # dLeyna's SortBy of the MediaContainer2 ...Ex methods: valid orders, every way to
            # get one wrong, and the bounds (256 characters, each property once).
            names = ["DisplayName", "Type", "Artist", "Album", "Genre", "Date", "TrackNumber", "Duration"]
            return self.rng.choice([
                "", "+DisplayName", "-Artist,+DisplayName", ",".join(("+" if i % 2 else "-") + n for i, n in enumerate(names)),
                "DisplayName", "+", "-", ",", "+Artist,", ",+Artist", "+Artist,,+Album", "+Artist, +Album", " +Artist",
                "+Bitrate", "+URLs", "+Path", "+displayname", "+Artist,-Artist", "+" + "x" * 255, "+" + "x" * 70000,
                ",".join(["+DisplayName"] * 5000), "+\u00e9" * 100, "++DisplayName", "-+Date",
            ])
        if "order" in hint and r < 0.5:
            return self.rng.choice(["Alphabetical", "User", "Created", "Modified", "Nope", ""])
        if "loopstatus" in hint or "status" in hint:
            return self.rng.choice(["None", "Track", "Playlist", "none", "", "x" * 1000])
        if depth == 0 and r < 0.02:
            # A megabyte: far under the bus's message limit, far over anything meaningful.
            return "m" * 1000000
        return self.rng.choice([
            "", "x", "a" * 1024, "b" * 65536, "é" * 30000, "\u202e\ufeff", "%s%n%x", "../../../../etc/passwd",
            "'; DROP TABLE tracks; --", "\U0001F3B5" * 100, "*", "null", "-1", "\x01\x7f", "\ufffd" * 10,
            self.root, MPRIS_PATH, "/org/mpris/MediaPlayer2/TrackList/NoTrack",
        ])

    def path(self):
        self.last_path_missing = False
        if self.rng.random() < 0.5:
            self.last_path_missing = True
            return self.rng.choice(self.missing_paths)
        return self.rng.choice([
            "/", "/org", MPRIS_PATH, MPRIS_PATH + "/TrackList/NoTrack", "/org/mprisbridge/Track/x",
            "/org/mprisbridge/Track/" + "a" * 5000, "/org/mprisbridge/Playlist/nope", self.root + "/__art",
        ] + self.tracks_paths() + self.nodes)

    def tracks_paths(self):
        return [t for t in self.tracks if t.startswith("/")][:5]

    def value(self, signature, hint="", depth=0):
        code = signature[0]
        rng = self.rng
        if code == "y":
            return dbus.Byte(rng.choice([0, 1, 255]))
        if code == "b":
            return dbus.Boolean(rng.random() < 0.5)
        if code == "n":
            return dbus.Int16(rng.choice([-32768, -1, 0, 32767]))
        if code == "q":
            return dbus.UInt16(rng.choice([0, 1, 65535]))
        if code == "i":
            return dbus.Int32(rng.choice([-2**31, -1, 0, 1, 2**31 - 1]))
        if code == "u":
            return dbus.UInt32(rng.choice([0, 1, 2, 100, 5000, 65536, 2**31, 2**32 - 1]))
        if code == "x":
            return dbus.Int64(rng.choice([-2**63, -2**63 + 1, -10**12, -1, 0, 1, 5 * 10**6, 10**12, 2**62, 2**63 - 1]))
        if code == "t":
            return dbus.UInt64(rng.choice([0, 1, 2**63, 2**64 - 1]))
        if code == "d":
            return dbus.Double(rng.choice([float("nan"), -float("nan"), float("inf"), float("-inf"), -1e308, -1.0, -0.0,
                                           0.0, 5e-324, 1e-300, 0.5, 1.0, 2.0, 3.0, 9.2e18, 1e308]))
        if code == "s":
            # Inside containers only short strings: a message must stay within the bus's size
            # limit (the bus drops a client that sends a larger one).
            return dbus.String(self.string(hint) if depth == 0 else self.rng.choice(["", "x", "Path", "*", "é" * 40]))
        if code == "o":
            return dbus.ObjectPath(self.path() if depth == 0 else self.rng.choice(["/", MPRIS_PATH, self.root]))
        if code == "g":
            return dbus.Signature(rng.choice(["", "s", "a{sv}", "v" * 255, "(" * 30 + "i" + ")" * 30]))
        if code == "v":
            inner = rng.choice(["s", "d", "x", "b", "as", "a{sv}", "o", "u", "ay"]) if depth < 3 else "s"
            value = self.value(inner, hint, depth + 1)
            if depth == 0 and inner in BASIC_TYPES and rng.random() < 0.1:
                # Variants inside variants, up to what the bus lets through (64 levels of nesting
                # in all: a container inside would pass it, and the bus drops the sender).
                value = with_level(value, rng.choice([2, 16, 32, 60]))
            return value
        if code == "a":
            element = signature[1:]
            if element == "y":
                return dbus.ByteArray(rng.choice([b"", b"\xff\xfe\x00\xc0\x80", b"\x00" * 4096, b"\xed\xa0\x80" * 100,
                                                  bytes(range(256)) * 64]))
            count = rng.choice([0, 1, 3, 100, 10000]) if depth < 2 else rng.choice([0, 1])
            if depth == 0 and element in ("u", "i", "d", "b", "x") and self.huge_array and rng.random() < 0.1:
                count = self.huge_array
            if element.startswith("{"):
                key, val = split_signature(element[1:-1])
                return dbus.Dictionary({self.value(key, hint, depth + 1): self.value(val, hint, depth + 1)
                                        for _ in range(min(count, 50))}, signature=element[1:-1])
            return dbus.Array([self.value(element, hint, depth + 1) for _ in range(count)], signature=element)
        if code == "(":
            return dbus.Struct([self.value(t, hint, depth + 1) for t in split_signature(signature[1:-1])])
        raise ValueError(signature)

    def deep_array(self):
        """An array of arrays 32 deep: the specification's limit."""
        value = dbus.Array(["x"], signature="s")
        signature = "as"
        for _ in range(31):
            value = dbus.Array([value], signature=signature)
            signature = "a" + signature
        return signature, value

    def mutated_signature(self, signature):
        """A signature like the expected one but wrong: an argument missing, one too many, one
        of another type, strings as (invalid UTF-8) bytes, or the arguments in another order."""
        types = split_signature(signature)
        rng = self.rng
        for _ in range(10):
            choice = rng.randrange(6)
            mutated = list(types)
            if choice == 0 and mutated:
                mutated.pop(rng.randrange(len(mutated)))
            elif choice == 1:
                mutated.insert(rng.randrange(len(mutated) + 1), rng.choice(["s", "u", "x", "d", "v", "as", "a{sv}"]))
            elif choice == 2 and mutated:
                mutated[rng.randrange(len(mutated))] = rng.choice(["s", "i", "u", "x", "t", "d", "b", "o", "g", "v", "ay",
                                                                   "as", "(ss)", "a{ss}"])
            elif choice == 3 and "s" in mutated:
                mutated = ["ay" if t == "s" else t for t in mutated]
            elif choice == 4 and len(mutated) > 1:
                rng.shuffle(mutated)
            elif choice == 5:
                mutated = [rng.choice(["s", "i", "u", "d", "o", "as", "a{sv}", "(ii)", "v"])
                           for _ in range(rng.choice([0, 1, 2, 5, 12]))]
            if "".join(mutated) != signature:
                return "".join(mutated)
        return signature + "s"


class Target:
    def __init__(self, bus_name, path, interface, member, signature, arguments, kind):
        self.bus_name, self.path, self.interface, self.member = bus_name, path, interface, member
        self.signature, self.arguments, self.kind = signature, arguments, kind


def introspect(bus, bus_name, path):
    message = dbus.lowlevel.MethodCallMessage(bus_name, path, INTROSPECTABLE, "Introspect")
    reply = bus.send_message_with_reply_and_block(message, TIMEOUT)
    return ElementTree.fromstring(reply.get_args_list()[0])


def targets_of(bus, bus_name, path, skipped=()):
    found = []
    try:
        tree = introspect(bus, bus_name, path)
    except dbus.DBusException:
        return found
    seen = set()
    for interface in tree.findall("interface"):
        name = interface.get("name")
        seen.add(name)
        for method in interface.findall("method"):
            if (name, method.get("name")) in SKIPPED or name + "." + method.get("name") in skipped:
                continue
            inputs = [a for a in method.findall("arg") if a.get("direction", "in") == "in"]
            found.append(Target(bus_name, path, name, method.get("name"), "".join(a.get("type") for a in inputs),
                                [a.get("name") or "" for a in inputs], "method"))
        for prop in interface.findall("property"):
            if name + "." + prop.get("name") in skipped:
                continue
            found.append(Target(bus_name, path, name, prop.get("name"), prop.get("type"), [prop.get("access")],
                                "property"))
    # Every object answers these (libdbus or the daemon), whether it lists them or not.
    for interface, member in ((PEER, "Ping"), (PEER, "GetMachineId"), (INTROSPECTABLE, "Introspect")):
        if interface not in seen:
            found.append(Target(bus_name, path, interface, member, "", [], "method"))
    return found


def discover(bus, name, skipped):
    """Every method and property of both names: the MPRIS object and a sample of every kind of
    node of the media tree (root, tabs, containers, items, informative rows, cover objects)."""
    player_name = "org.mpris.MediaPlayer2." + name
    tree_name = "org.gnome.UPnP.MediaServer2." + name
    root = "/org/gnome/UPnP/MediaServer2/" + name
    targets = targets_of(bus, player_name, MPRIS_PATH, skipped)
    tracks = []
    try:
        player = bus.get_object(player_name, MPRIS_PATH, introspect=False)
        ids = player.Get("org.mpris.MediaPlayer2.TrackList", "Tracks", dbus_interface=PROPERTIES)
        tracks += [str(i) for i in ids][:5]
        metadata = player.GetTracksMetadata(ids[:5], dbus_interface="org.mpris.MediaPlayer2.TrackList")
        tracks += [str(m.get("xesam:url", "")) for m in metadata if m.get("xesam:url")]
    except dbus.DBusException:
        pass
    nodes, kinds, pending = [root], {"root": 1}, [root]
    while pending and len(nodes) < 80:
        path = pending.pop(0)
        try:
            container = bus.get_object(tree_name, path, introspect=False)
            children = container.ListChildren(dbus.UInt32(0), dbus.UInt32(8), ["Path", "Type", "AlbumArt", "Informative"],
                                              dbus_interface="org.gnome.UPnP.MediaContainer2")
        except dbus.DBusException:
            continue
        for child in children:
            child_path = str(child["Path"])
            kind = str(child.get("Type")) + (" (informative)" if child.get("Informative", False) else "")
            if path == root:
                kind = "tab"
            if kinds.get(kind, 0) < 6 and child_path not in nodes:
                kinds[kind] = kinds.get(kind, 0) + 1
                nodes.append(child_path)
                if str(child.get("Type")) == "container":
                    pending.append(child_path)
            if "AlbumArt" in child and str(child["AlbumArt"]) not in nodes and kinds.get("art", 0) < 6:
                kinds["art"] = kinds.get("art", 0) + 1
                nodes.append(str(child["AlbumArt"]))
    for path in nodes:
        targets += targets_of(bus, tree_name, path, skipped)
    return targets, tracks, root, tree_name, player_name, nodes, kinds


class Fuzzer:
    def __init__(self, bus, pid, seed, name, skipped, huge_array=200000):
        self.bus, self.pid = bus, pid
        self.rng = random.Random(seed)
        (self.targets, tracks, self.root, self.tree_name, self.player_name, self.nodes,
         self.kinds) = discover(bus, name, skipped)
        self.hostile = Hostile(self.rng, self.root, tracks, self.nodes, huge_array)
        # Each member (or property) of each interface is as likely as any other, whatever the
        # number of objects it is on: the tree's nodes have some 20 properties each, and a
        # uniform pick over objects would leave SearchObjects or OpenUri a call in a thousand.
        self.groups = {}
        for target in self.targets:
            self.groups.setdefault((target.bus_name, target.interface, target.member, target.kind), []).append(target)
        self.group_keys = sorted(self.groups)
        self.replies, self.timeouts, self.calls, self.slowest = {}, 0, 0, (0.0, "")
        # (kind, member) -> {"count", "detail", "call", "reproducer"}
        self.findings = {}
        self.disconnects = []

    def next_call(self):
        rng = self.rng
        target = rng.choice(self.groups[rng.choice(self.group_keys)])
        check = None
        if target.kind == "property":
            interface, path = PROPERTIES, target.path
            r = rng.random()
            if r < 0.4:
                member, signature = "Set", "ssv"
                same_type = rng.random() < 0.6
                value_signature = target.signature if same_type else rng.choice(["s", "d", "x", "as", "b", "a{sv}", "ay"])
                value = self.hostile.value(value_signature, target.member)
                if value_signature == target.signature and value_signature in BASIC_TYPES and rng.random() < 0.05:
                    value = with_level(value, rng.choice([2, 32]))
                values = [target.interface, target.member, value]
                if target.arguments[0] == "read":
                    check = ("read-only property written", "%s.%s" % (target.interface, target.member))
                elif value_signature != target.signature or getattr(value, "variant_level", 0) > 1:
                    check = ("property set with a wrong type", "%s.%s as %s" % (
                        target.interface, target.member, value_signature if value.variant_level <= 1 else "v"))
            elif r < 0.62:
                member, values, signature = "Get", [target.interface, rng.choice([target.member, "Nope", "x" * 5000])], "ss"
            elif r < 0.7:
                # The property asked of an object that must not exist (an old cover path naming a file).
                member, values, signature = rng.choice([("Get", [target.interface, target.member], "ss"),
                                                        ("GetAll", [target.interface], "s")])
                path = rng.choice(self.hostile.missing_paths)
                check = ("an object answers at a path that names no node", "%s.%s at %s" % (
                    target.interface, target.member, path[:100]))
            elif r < 0.85:
                member, values, signature = "GetAll", [rng.choice([target.interface, "org.nope.X", ""])], "s"
            else:
                member = rng.choice(["Set", "Get", "GetAll"])
                expected = {"Set": "ssv", "Get": "ss", "GetAll": "s"}[member]
                signature = self.hostile.mutated_signature(expected)
                values = [self.hostile.value(t) for t in split_signature(signature)]
                check = ("wrong signature accepted", "%s.%s (%s)" % (PROPERTIES, member, signature))
        else:
            interface, member, path = target.interface, target.member, target.path
            r = rng.random()
            if r < 0.65:
                signature = target.signature
                values = [self.hostile.value(t, hint) for t, hint in zip(split_signature(signature), target.arguments)]
                for value, hint in zip(values, target.arguments):
                    if member in ("OpenUri", "AddTrack") and "uri" in hint.lower() and str(value) in REFUSED_URIS:
                        check = ("file that is not audio opened", "%s %s" % (member, str(value)[:60]))
            elif r < 0.88:
                if rng.random() < 0.1:
                    signature, deep = self.hostile.deep_array()
                    values = [deep]
                else:
                    signature = self.hostile.mutated_signature(target.signature)
                    values = [self.hostile.value(t) for t in split_signature(signature)]
                check = ("wrong signature accepted", "%s.%s (%s, expected %s)" % (
                    interface, member, signature[:40], target.signature))
            else:
                signature = target.signature
                values = [self.hostile.value(t, hint) for t, hint in zip(split_signature(signature), target.arguments)]
                path = self.hostile.path()
                if self.hostile.last_path_missing and interface not in (PEER, INTROSPECTABLE):
                    check = ("an object answers at a path that names no node", "%s.%s at %s" % (
                        interface, member, path[:100]))
        if rng.random() < 0.05:
            interface = rng.choice([None, "org.nope.Interface", PEER])
            check = None
        return Call(target.bus_name, path, interface, member, signature, values, target, check)

    def send(self, call):
        """Sends one call; returns (outcome, reply or error, seconds)."""
        started = time.monotonic()
        try:
            reply = self.bus.send_message_with_reply_and_block(call.message(), TIMEOUT)
            outcome, answer = "ok", reply
        except dbus.DBusException as error:
            outcome, answer = error.get_dbus_name() or "unknown", error
        if outcome == "org.freedesktop.DBus.Error.Disconnected":
            # The bus dropped the fuzzer (a message past its limits): the fuzzer's fault, not the
            # daemon's. Counted and shown, and a new connection carries on.
            self.disconnects.append(call.describe())
            self.bus = dbus.SessionBus(private=True)
        return outcome, answer, time.monotonic() - started

    def call(self, call):
        outcome, answer, elapsed = self.send(call)
        if outcome == "org.freedesktop.DBus.Error.NoReply":
            self.timeouts += 1
        if elapsed > self.slowest[0]:
            self.slowest = (elapsed, call.describe())
        self.replies[outcome] = self.replies.get(outcome, 0) + 1
        self.calls += 1
        self.judge(call, outcome, answer)
        return outcome

    def judge(self, call, outcome, answer):
        """Records a finding when the reply breaks a promise without crashing anything."""
        if outcome == "ok":
            if call.check:
                self.finding(call.check[0], call.check[1], call)
            named = [f for f in SYSTEM_FILES if any(f in text for text in strings_in(answer.get_args_list()))]
            if named:
                self.finding("a reply names a system file", "%s.%s: %s" % (call.interface, call.member, named[0]), call)
        elif outcome not in ("org.freedesktop.DBus.Error.NoReply", "org.freedesktop.DBus.Error.Disconnected"):
            message = answer.get_dbus_message() or ""
            size = len(message.encode("utf-8", "surrogateescape"))
            if size > MAX_ERROR_MESSAGE and not outcome.startswith("org.freedesktop.DBus.Error.Limits"):
                self.finding("error message over 1 KiB", "%s from %s.%s" % (outcome, call.interface, call.member), call,
                             "%d bytes" % size)

    def finding(self, kind, detail, call, note=""):
        key = (kind, detail.split(" ")[0])
        entry = self.findings.setdefault(key, {"kind": kind, "detail": detail, "count": 0, "note": note,
                                               "call": call.describe(), "reproducer": call.reproducer()})
        entry["count"] += 1

    def liveness(self):
        """Seconds the daemon took to answer a Ping, a Get and a listing; None if it did not."""
        started = time.monotonic()
        try:
            for destination, path, interface, member, signature, values in (
                (self.player_name, MPRIS_PATH, PEER, "Ping", "", []),
                (self.player_name, MPRIS_PATH, PROPERTIES, "Get", "ss",
                 ["org.mpris.MediaPlayer2.Player", "PlaybackStatus"]),
                (self.tree_name, self.root, "org.gnome.UPnP.MediaContainer2", "ListChildren", "uuas",
                 [dbus.UInt32(0), dbus.UInt32(10), ["DisplayName"]]),
            ):
                self.bus.send_message_with_reply_and_block(
                    Call(destination, path, interface, member, signature, values).message(), TIMEOUT)
        except dbus.DBusException:
            return None
        return time.monotonic() - started


def strings_in(values, budget=None):
    """The strings of a reply, shallowly enough to stay cheap for 5,000-row listings."""
    budget = budget if budget is not None else [2000]
    for value in values:
        if budget[0] <= 0:
            return
        budget[0] -= 1
        if isinstance(value, (dbus.String, dbus.ObjectPath, str)):
            yield str(value)
        elif isinstance(value, dict):
            yield from strings_in(list(value.values()), budget)
        elif isinstance(value, (list, tuple)):
            yield from strings_in(value, budget)


def replay_script(calls):
    """A Python script that sends `calls` in order, as the fuzzer did, and says whether the
    daemon answered each: for a crash that needs more than one call."""
    lines = ["import dbus, dbus.lowlevel", "bus = dbus.SessionBus()", "calls = ["]
    for call in calls:
        lines.append("    (%r, %r, %r, %r, %r, [%s])," % (call.bus_name, call.path, call.interface, call.member, call.signature,
                                                       ", ".join(literal(v) for v in call.values)))
    lines += ["]", "for destination, path, interface, member, signature, values in calls:",
              "    m = dbus.lowlevel.MethodCallMessage(destination, path, interface, member)",
              "    if signature:", "        m.append(*values, signature=signature)",
              "    try:", "        bus.send_message_with_reply_and_block(m, 5)", "        print(member, 'ok')",
              "    except dbus.DBusException as error:", "        print(member, error.get_dbus_name())", ""]
    return "\n".join(lines)


class Crashes:
    """Crashes seen, with the call found to cause each, and the daemon restarted after each."""

    def __init__(self, fuzzer, restart_command, repro_dir=None):
        self.fuzzer, self.restart_command, self.repro_dir = fuzzer, restart_command, repro_dir
        self.distinct = {}
        self.count = 0
        self.stalls = []
        self.restart_error = None

    def restart(self):
        try:
            self.start()
        except (RuntimeError, subprocess.SubprocessError, ValueError, IndexError) as error:
            # The run ends here, with its summary: a daemon that cannot come back is a finding too.
            self.restart_error = str(error)
            raise

    def start(self):
        # A daemon the replay did not kill still owns the names: a second one would serve as
        # ….instance<pid>, and the calls would go on reaching the first.
        if alive(self.fuzzer.pid):
            os.kill(self.fuzzer.pid, 9)
            if not dead_within(self.fuzzer.pid, 10):
                raise RuntimeError("daemon %d does not die" % self.fuzzer.pid)
        output = subprocess.run(["bash", "-c", self.restart_command], stdout=subprocess.PIPE, check=True,
                                timeout=120).stdout.decode().split()
        self.fuzzer.pid = int(output[-1])
        # The name is owned once the daemon is ready; wait for it to answer.
        deadline = time.monotonic() + 60
        while self.fuzzer.liveness() is None:
            if time.monotonic() > deadline or not alive(self.fuzzer.pid):
                raise RuntimeError("the restarted daemon does not answer")
            time.sleep(0.1)

    def record(self, batch):
        """After a crash in `batch` (a list of Call): finds and confirms the call that kills a
        fresh daemon, if the crash reproduces. Leaves a fresh daemon running."""
        self.count += 1
        culprit, confirmed = None, False
        if self.restart_command:
            self.restart()
            for call in batch:
                self.fuzzer.send(call)
                if dead_within(self.fuzzer.pid, 0.2):
                    culprit = call
                    break
            self.restart()
            if culprit is not None:
                self.fuzzer.send(culprit)
                confirmed = dead_within(self.fuzzer.pid, 3)
                if confirmed:
                    self.restart()
        # Only a call that kills a fresh daemon alone names a crash; the others depend on timing
        # or on what came before (a crash on a streaming thread, say), and are one kind.
        if not self.restart_command:
            key = "not replayed (no --restart-command)"
        else:
            key = "%s.%s" % (culprit.interface, culprit.member) if confirmed else "needs more than one call"
        entry = self.distinct.setdefault(key, {"count": 0, "confirmed_alone": confirmed,
                                               "call": culprit.describe() if confirmed else None,
                                               "reproducer": culprit.reproducer() if confirmed else None,
                                               "replays_died_at": [], "scripts": [],
                                               "batch": [c.describe() for c in batch[-10:]]})
        entry["count"] += 1
        entry["replays_died_at"].append("%s.%s" % (culprit.interface, culprit.member) if culprit else "none")
        if self.repro_dir and len(entry["scripts"]) < 3:
            # The calls up to the one that killed the replayed daemon (all of them if none did).
            calls = batch[:batch.index(culprit) + 1] if culprit is not None else batch
            os.makedirs(self.repro_dir, exist_ok=True)
            script = os.path.join(self.repro_dir, "crash-%d.py" % self.count)
            with open(script, "w") as file:
                file.write(replay_script(calls))
            entry["scripts"].append(script)

    def stall(self, batch):
        """The daemon is alive but did not answer the liveness check within 5 s: its stacks
        are the lead, then it is killed and replaced so the run goes on."""
        pid = self.fuzzer.pid
        stacks = subprocess.run(["gdb", "-p", str(pid), "-batch", "-ex", "thread apply all bt 12"],
                                stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, timeout=120).stdout.decode(errors="replace")
        self.stalls.append({"batch": [c.describe() for c in batch[-20:]], "stacks": stacks[-6000:]})
        self.restart()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--pid", type=int, required=True)
    parser.add_argument("--address", help="the bus address (default: DBUS_SESSION_BUS_ADDRESS)")
    parser.add_argument("--name", default="mprisbridge")
    parser.add_argument("--calls", type=int, default=3000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--batch", type=int, default=200)
    parser.add_argument("--max-rss-growth-kb", type=int, default=5 * 1024)
    parser.add_argument("--warmup", type=int, help="calls before RSS growth is counted (default: a tenth)")
    parser.add_argument("--json")
    parser.add_argument("--trace", help="a file that gets each call before it is sent")
    parser.add_argument("--skip", action="append", default=[],
                        help="INTERFACE.MEMBER not to call or set (a known, reported failure)")
    parser.add_argument("--restart-command", help="shell command starting a fresh daemon and printing its pid")
    parser.add_argument("--huge-array", type=int, default=200000,
                        help="elements of the largest arrays sent (0: none); past 131,072 values a call is refused unread")
    parser.add_argument("--repro-dir", help="where to write each crash's replay script")
    parser.add_argument("--no-findings-fail", action="store_true", help="report findings without failing on them")
    options = parser.parse_args()
    if options.address:
        os.environ["DBUS_SESSION_BUS_ADDRESS"] = options.address
    warmup = options.warmup if options.warmup is not None else options.calls // 10
    trace = open(options.trace, "w", buffering=1) if options.trace else None

    bus = dbus.SessionBus()
    fuzzer = Fuzzer(bus, options.pid, options.seed, options.name, set(options.skip), options.huge_array)
    crashes = Crashes(fuzzer, options.restart_command, options.repro_dir)
    start_rss = rss_kb(options.pid)
    warm_rss, warm_at = None, warmup
    peak_rss = start_rss or 0
    slow_liveness, worst_liveness = 0, 0.0
    last_batch = []
    rss_series, rss_steps, previous_rss = [], [], None
    started = time.monotonic()
    while fuzzer.calls < options.calls and crashes.restart_error is None:
        batch, crashed = [], False
        for _ in range(min(options.batch, options.calls - fuzzer.calls)):
            call = fuzzer.next_call()
            if trace:
                trace.write(call.describe() + "\n")
            batch.append(call)
            outcome = fuzzer.call(call)
            if outcome in ("org.freedesktop.DBus.Error.NoReply", "org.freedesktop.DBus.Error.ServiceUnknown",
                           "org.freedesktop.DBus.Error.NameHasNoOwner") and not alive(fuzzer.pid):
                crashed = True
                break
        seconds = None if crashed else fuzzer.liveness()
        crashed = crashed or not alive(fuzzer.pid)
        if not crashed:
            if seconds is None or seconds > TIMEOUT:
                slow_liveness += 1
            else:
                worst_liveness = max(worst_liveness, seconds)
        last_batch = batch
        if crashed:
            print("crash %d after %d calls; the batch's last calls:" % (crashes.count + 1, fuzzer.calls), file=sys.stderr)
            for call in batch[-5:]:
                print("  " + call.describe(), file=sys.stderr)
            if not options.restart_command:
                crashes.record(batch)
                break
            try:
                crashes.record(batch)
            except Exception:
                break
            # RSS growth is the last daemon's, from the end of its own warm-up.
            warm_rss, warm_at = None, fuzzer.calls + warmup
            continue
        if seconds is None and options.restart_command:
            print("the daemon did not answer the liveness check after %d calls; restarting it" % fuzzer.calls,
                  file=sys.stderr)
            try:
                crashes.stall(batch)
            except Exception:
                break
            warm_rss, warm_at = None, fuzzer.calls + warmup
            continue
        rss = rss_kb(fuzzer.pid)
        if rss is not None:
            # A tenth of the run at a time: growth that levels off is malloc keeping what it
            # was given at a peak; growth in steps to the end is a leak.
            if fuzzer.calls >= len(rss_series) * max(options.calls // 10, 1):
                rss_series.append([fuzzer.calls, rss])
            # The batches after which RSS rose most, with their calls: where to look for a leak
            # or for the call that needs that much memory.
            if previous_rss is not None and rss - previous_rss > 1024 and fuzzer.calls > warm_at:
                rss_steps.append({"after_calls": fuzzer.calls, "kb": rss - previous_rss,
                                  "calls": [replay_script(batch)] if options.repro_dir else []})
                rss_steps.sort(key=lambda step: -step["kb"])
                del rss_steps[3:]
            previous_rss = rss
            peak_rss = max(peak_rss, rss)
            if warm_rss is None and fuzzer.calls >= warm_at:
                warm_rss = rss
        if slow_liveness and not options.restart_command:
            break
    duration = time.monotonic() - started
    end_rss = rss_kb(fuzzer.pid)
    growth = (end_rss - warm_rss) if end_rss is not None and warm_rss is not None else None
    findings = sorted(fuzzer.findings.values(), key=lambda f: (f["kind"], f["detail"]))
    summary = {
        "calls": fuzzer.calls, "seconds": round(duration, 1), "calls_per_second": round(fuzzer.calls / max(duration, 1e-9)),
        "replies": dict(sorted(fuzzer.replies.items(), key=lambda item: -item[1])), "timeouts": fuzzer.timeouts,
        "crashes": crashes.count, "distinct_crashes": crashes.distinct, "stalls": crashes.stalls,
        "restart_error": crashes.restart_error, "fuzzer_disconnected_by_bus": fuzzer.disconnects, "failed_liveness_checks": slow_liveness,
        "slowest_reply_seconds": round(fuzzer.slowest[0], 3), "slowest_call": fuzzer.slowest[1],
        "slowest_liveness_seconds": round(worst_liveness, 3),
        "rss_kb": {"start": start_rss, "after_warmup": warm_rss, "warmup_calls": warmup, "end": end_rss, "peak": peak_rss,
                   "growth": growth, "series": rss_series,
                   "steps_over_1_mib": [{"after_calls": step["after_calls"], "kb": step["kb"]} for step in rss_steps]},
        "findings": findings, "huge_array": options.huge_array, "targets": len(fuzzer.targets), "node_kinds": fuzzer.kinds, "seed": options.seed,
        "skipped": sorted(options.skip),
    }
    print("fuzzed %d calls in %.1f s (%d calls/s) over %d methods and properties, seed %d%s" % (
        fuzzer.calls, duration, summary["calls_per_second"], len(fuzzer.targets), options.seed,
        ", skipping " + ", ".join(options.skip) if options.skip else ""))
    print("tree nodes sampled by kind: " + ", ".join("%s %d" % item for item in sorted(fuzzer.kinds.items())))
    for name, count in summary["replies"].items():
        print("  %7d  %s" % (count, name))
    print("timeouts %d, crashes %d, failed liveness checks %d" % (fuzzer.timeouts, crashes.count, slow_liveness))
    print("slowest reply %.3f s: %s" % (fuzzer.slowest[0], fuzzer.slowest[1][:300]))
    print("RSS %s KB at start, %s after %d warm-up calls, %s at the end (peak %s): growth %s KB" % (
        start_rss, warm_rss, warmup, end_rss, peak_rss, growth))
    print("RSS KB by calls: " + ", ".join("%d: %d" % (calls, kb) for calls, kb in rss_series))
    for index, step in enumerate(rss_steps):
        line = "RSS rose %d KB in the batch ending at call %d" % (step["kb"], step["after_calls"])
        if step["calls"]:
            os.makedirs(options.repro_dir, exist_ok=True)
            script = os.path.join(options.repro_dir, "rss-step-%d.py" % (index + 1))
            with open(script, "w") as file:
                file.write(step["calls"][0])
            line += ": its calls are replayed by " + script
        print(line)
    for key, crash in crashes.distinct.items():
        print("\nCRASH (%d times): %s%s" % (crash["count"], key, ", confirmed by this call alone" if crash["confirmed_alone"]
                                             else ""))
        if crash["reproducer"]:
            print("  " + crash["call"][:300])
            print(crash["reproducer"])
        elif options.restart_command:
            print("  replays of the crashed batches died at: " + ", ".join(crash["replays_died_at"]))
        else:
            print("  the crashed batch's last calls:\n    " + "\n    ".join(c[:300] for c in crash["batch"]))
        for script in crash["scripts"]:
            print("  replay of a crashed batch up to the call that killed it: /usr/bin/python3 " + script)
    for call in fuzzer.disconnects[:5]:
        print("\nTHE BUS DROPPED THE FUZZER after sending: " + call[:300])
    if crashes.restart_error:
        print("\nTHE RUN ENDED EARLY: a restarted daemon did not come back: " + crashes.restart_error)
    for stall in crashes.stalls:
        print("\nSTALL: the last calls before it:\n    " + "\n    ".join(stall["batch"][-5:]))
        print(stall["stacks"][-3000:])
    for finding in findings:
        print("\nFINDING (%d times): %s: %s %s" % (finding["count"], finding["kind"], finding["detail"], finding["note"]))
        print(finding["reproducer"])
    if options.json:
        with open(options.json, "w") as file:
            json.dump(summary, file, indent=2)
    failed = (crashes.count or crashes.restart_error or fuzzer.disconnects or fuzzer.timeouts or slow_liveness
              or (findings and not options.no_findings_fail) or (growth is not None and growth >= options.max_rss_growth_kb))
    if fuzzer.timeouts or slow_liveness:
        # A stall has no culprit found for it: the last calls before it are the lead.
        print("the last batch's last calls:", file=sys.stderr)
        for call in last_batch[-20:]:
            print("  " + call.describe(), file=sys.stderr)
    if failed:
        print("FAILED", file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
