"""A hostile client of mpris-bridge: derives calls from the daemon's introspection and sends
malformed and hostile ones, checking after each batch that the daemon is alive and answering.

Usage: fuzz_daemon.py --pid PID [--name mprisbridge] [--calls N] [--seed S] [--batch B]
                      [--max-rss-growth-kb K] [--json FILE] [--trace FILE] [--skip INTERFACE.MEMBER ...]
On the bus of DBUS_SESSION_BUS_ADDRESS. Prints a summary: calls, calls/s, replies by error
name, timeouts (no reply within 5 s), crashes, the slowest reply and RSS growth. Exits 1 on a
crash, a timeout, a dead or slow liveness check, or RSS growth past the limit, measured from
the end of a warm-up (the first tenth of the calls, --warmup to change it: the tree's copy,
each format's decoder and malloc's arenas fill there, and stay); then the last batch's calls
are printed, to reproduce. Run with /usr/bin/python3 (python3-dbus). Never calls Quit.
"""
import argparse
import json
import os
import random
import sys
import time
import xml.etree.ElementTree as ElementTree

import dbus
import dbus.lowlevel

TIMEOUT = 5.0
MPRIS_PATH = "/org/mpris/MediaPlayer2"
SKIPPED = {("org.mpris.MediaPlayer2", "Quit")}


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
        close = ")" if code == "(" else "}"
        depth, index = 0, index
        while True:
            if signature[index] in "({":
                depth += 1
            elif signature[index] in ")}":
                depth -= 1
                if depth == 0:
                    return index + 1
            index += 1
    return index + 1


class Hostile:
    """Values that break assumptions, for a type and for what the argument is named."""

    def __init__(self, rng, root, tracks):
        self.rng = rng
        self.root = root
        self.tracks = tracks

    def string(self, hint=""):
        r = self.rng.random()
        hint = hint.lower()
        if "uri" in hint and r < 0.7:
            return self.rng.choice([
                "file:///etc/passwd", "file:///etc/shadow", "file:///dev/zero", "file:///dev/urandom",
                "file:///proc/self/environ", "file:///proc/self/mem", "file:///", "file:///tmp",
                "file:///nonexistent/a.ogg", "file://%2e%2e/etc/passwd", "file:///../../etc/passwd",
                "http://127.0.0.1:1/stream.mp3", "https://127.0.0.1:1/x.ogg", "http://[::1]:1/a",
                "data:audio/ogg;base64,AAAA", "javascript:alert(1)", "ftp://127.0.0.1/x", "", ":",
                "not a uri", "file:" + "/a" * 5000, "http://" + "x" * 70000,
            ] + [t for t in self.tracks[:5]])
        if ("query" in hint or "criteria" in hint) and r < 0.7:
            relation = 'DisplayName contains "a"'
            return self.rng.choice([
                " and ".join([relation] * self.rng.choice([2, 63, 64, 65, 5000])),
                "(" * self.rng.choice([15, 16, 17, 10000]) + relation + ")" * 17,
                'DisplayName = "' + "x" * 70000 + '"', '"unterminated', "((", "))", "*", "and or",
                'upnp:class derivedfrom "object.item"', 'Artist exists maybe', "Bitrate > \"1\"",
            ])
        if "order" in hint and r < 0.5:
            return self.rng.choice(["Alphabetical", "User", "Created", "Modified", "Nope", ""])
        if "loopstatus" in hint or "status" in hint:
            return self.rng.choice(["None", "Track", "Playlist", "none", "", "x" * 1000])
        return self.rng.choice([
            "", "x", "a" * 1024, "b" * 65536, "é" * 30000, "\u202e\ufeff", "%s%n%x", "../../../../etc/passwd",
            "'; DROP TABLE tracks; --", "\U0001F3B5" * 100, "*", "null", "-1",
        ])

    def path(self):
        r = self.rng.random()
        escaped = "".join("_%02x" % b for b in b"file:///etc/passwd")
        return self.rng.choice([
            "/", "/org", MPRIS_PATH, MPRIS_PATH + "/TrackList/NoTrack", "/org/mprisbridge/Track/x",
            "/org/mprisbridge/Track/" + "a" * 5000, "/org/mprisbridge/Playlist/nope",
            self.root, self.root + "/__art", self.root + "/__art/" + escaped, self.root + "/_" + "_" * 10,
            self.root + "/zz/yy/xx", self.root + "/" + "/".join(["a"] * 200),
        ] + self.tracks_paths())

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
            return dbus.UInt32(rng.choice([0, 1, 2, 100, 5000, 65536, 2**32 - 1]))
        if code == "x":
            return dbus.Int64(rng.choice([-2**63, -10**12, -1, 0, 1, 5 * 10**6, 10**12, 2**63 - 1]))
        if code == "t":
            return dbus.UInt64(rng.choice([0, 1, 2**64 - 1]))
        if code == "d":
            return dbus.Double(rng.choice([float("nan"), float("inf"), float("-inf"), -1e308, -1.0, 0.0, 5e-324,
                                           0.5, 1.0, 2.0, 1e308]))
        if code == "s":
            # Inside containers only short strings: a message must stay within the bus's size
            # limit (the bus drops a client that sends a larger one).
            return dbus.String(self.string(hint) if depth == 0 else self.rng.choice(["", "x", "Path", "*", "é" * 40]))
        if code == "o":
            return dbus.ObjectPath(self.path() if depth == 0 else self.rng.choice(["/", MPRIS_PATH, self.root]))
        if code == "g":
            return dbus.Signature(rng.choice(["", "s", "a{sv}", "(" * 30 + "i" + ")" * 30]))
        if code == "v":
            inner = rng.choice(["s", "d", "x", "b", "as", "a{sv}", "o", "u"]) if depth < 3 else "s"
            return self.value(inner, hint, depth + 1)
        if code == "a":
            element = signature[1:]
            count = rng.choice([0, 1, 3, 100, 10000]) if depth < 2 else rng.choice([0, 1])
            if element.startswith("{"):
                key, val = split_signature(element[1:-1])
                return dbus.Dictionary({self.value(key, hint, depth + 1): self.value(val, hint, depth + 1)
                                        for _ in range(min(count, 50))}, signature=element[1:-1])
            return dbus.Array([self.value(element, hint, depth + 1) for _ in range(count)], signature=element)
        if code == "(":
            return dbus.Struct([self.value(t, hint, depth + 1) for t in split_signature(signature[1:-1])])
        raise ValueError(signature)


class Target:
    def __init__(self, bus_name, path, interface, member, signature, arguments, kind):
        self.bus_name, self.path, self.interface, self.member = bus_name, path, interface, member
        self.signature, self.arguments, self.kind = signature, arguments, kind


def introspect(bus, bus_name, path):
    message = dbus.lowlevel.MethodCallMessage(bus_name, path, "org.freedesktop.DBus.Introspectable", "Introspect")
    reply = bus.send_message_with_reply_and_block(message, TIMEOUT)
    return ElementTree.fromstring(reply.get_args_list()[0])


def targets_of(bus, bus_name, path, skipped=()):
    found = []
    try:
        tree = introspect(bus, bus_name, path)
    except dbus.DBusException:
        return found
    for interface in tree.findall("interface"):
        name = interface.get("name")
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
        ids = player.Get("org.mpris.MediaPlayer2.TrackList", "Tracks", dbus_interface="org.freedesktop.DBus.Properties")
        tracks += [str(i) for i in ids][:5]
        metadata = player.GetTracksMetadata(ids[:5], dbus_interface="org.mpris.MediaPlayer2.TrackList")
        tracks += [str(m.get("xesam:url", "")) for m in metadata if m.get("xesam:url")]
    except dbus.DBusException:
        pass
    nodes, kinds, pending = [root], {}, [root]
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
            kind = (str(child.get("Type")), bool(child.get("Informative", False)))
            if kinds.get(kind, 0) < 6 and child_path not in nodes:
                kinds[kind] = kinds.get(kind, 0) + 1
                nodes.append(child_path)
                if kind[0] == "container":
                    pending.append(child_path)
            if "AlbumArt" in child and str(child["AlbumArt"]) not in nodes:
                nodes.append(str(child["AlbumArt"]))
    for path in nodes:
        targets += targets_of(bus, tree_name, path, skipped)
    return targets, tracks, root, tree_name, player_name


class Fuzzer:
    def __init__(self, bus, pid, seed, name, skipped):
        self.bus, self.pid = bus, pid
        self.rng = random.Random(seed)
        self.targets, tracks, self.root, self.tree_name, self.player_name = discover(bus, name, skipped)
        self.hostile = Hostile(self.rng, self.root, tracks)
        self.replies, self.timeouts, self.calls, self.slowest = {}, 0, 0, (0.0, "")
        self.batch_log = []

    def message(self):
        target = self.rng.choice(self.targets)
        rng = self.rng
        if target.kind == "property":
            interface = "org.freedesktop.DBus.Properties"
            r = rng.random()
            if r < 0.4:
                member, values, signature = "Set", [target.interface, target.member], "ssv"
                value = self.hostile.value(target.signature if rng.random() < 0.6 else rng.choice(["s", "d", "x", "as", "b"]),
                                           target.member)
                values.append(value)
            elif r < 0.7:
                member, values, signature = "Get", [target.interface, rng.choice([target.member, "Nope", "x" * 5000])], "ss"
            elif r < 0.85:
                member, values, signature = "GetAll", [rng.choice([target.interface, "org.nope.X", ""])], "s"
            else:
                member, signature = "Set", rng.choice(["", "s", "ss", "ssvv", "sss"])
                values = [self.hostile.value(t) for t in split_signature(signature)]
            path = target.path
        else:
            interface, member, path = target.interface, target.member, target.path
            r = rng.random()
            if r < 0.7:
                signature = target.signature
                values = [self.hostile.value(t, hint) for t, hint in zip(split_signature(signature), target.arguments)]
            elif r < 0.9:
                signature = rng.choice(["", "s", "i", "u", "d", "x", "o", "as", "a{sv}", "(ii)", "ss", "uuas", "suuas", "v"])
                values = [self.hostile.value(t) for t in split_signature(signature)]
            else:
                signature = target.signature
                values = [self.hostile.value(t, hint) for t, hint in zip(split_signature(signature), target.arguments)]
                path = self.hostile.path()
        if rng.random() < 0.05:
            interface = rng.choice([None, "org.nope.Interface", "org.freedesktop.DBus.Peer"])
        bus_name = target.bus_name
        message = dbus.lowlevel.MethodCallMessage(bus_name, path, interface, member)
        if signature:
            message.append(*values, signature=signature)
        shown = ", ".join(repr(value)[:80] for value in values) if signature else ""
        return message, "%s %s %s.%s (%s) %s" % (bus_name, path[:120], interface, member, signature, shown)

    def call(self, message, description):
        started = time.monotonic()
        try:
            self.bus.send_message_with_reply_and_block(message, TIMEOUT)
            outcome = "ok"
        except dbus.DBusException as error:
            outcome = error.get_dbus_name() or "unknown"
            if outcome == "org.freedesktop.DBus.Error.NoReply":
                self.timeouts += 1
        elapsed = time.monotonic() - started
        if elapsed > self.slowest[0]:
            self.slowest = (elapsed, description)
        self.replies[outcome] = self.replies.get(outcome, 0) + 1
        self.calls += 1
        return outcome

    def liveness(self):
        """Seconds the daemon took to answer a Ping, a Get and a listing; None if it did not."""
        started = time.monotonic()
        try:
            for destination, path, interface, member, signature, values in (
                (self.player_name, MPRIS_PATH, "org.freedesktop.DBus.Peer", "Ping", "", []),
                (self.player_name, MPRIS_PATH, "org.freedesktop.DBus.Properties", "Get", "ss",
                 ["org.mpris.MediaPlayer2.Player", "PlaybackStatus"]),
                (self.tree_name, self.root, "org.gnome.UPnP.MediaContainer2", "ListChildren", "uuas",
                 [dbus.UInt32(0), dbus.UInt32(10), ["DisplayName"]]),
            ):
                message = dbus.lowlevel.MethodCallMessage(destination, path, interface, member)
                if signature:
                    message.append(*values, signature=signature)
                self.bus.send_message_with_reply_and_block(message, TIMEOUT)
        except dbus.DBusException:
            return None
        return time.monotonic() - started


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--pid", type=int, required=True)
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
    options = parser.parse_args()
    warmup = options.warmup if options.warmup is not None else options.calls // 10
    trace = open(options.trace, "w", buffering=1) if options.trace else None

    bus = dbus.SessionBus()
    fuzzer = Fuzzer(bus, options.pid, options.seed, options.name, set(options.skip))
    start_rss = rss_kb(options.pid)
    warm_rss = None
    peak_rss = start_rss or 0
    crashed, slow_liveness, worst_liveness = False, 0, 0.0
    started = time.monotonic()
    while fuzzer.calls < options.calls and not crashed:
        batch = []
        for _ in range(min(options.batch, options.calls - fuzzer.calls)):
            message, description = fuzzer.message()
            if trace:
                trace.write(description + "\n")
            outcome = fuzzer.call(message, description)
            batch.append("%s -> %s" % (description, outcome))
            if outcome in ("org.freedesktop.DBus.Error.NoReply", "org.freedesktop.DBus.Error.ServiceUnknown",
                           "org.freedesktop.DBus.Error.NameHasNoOwner") and not alive(options.pid):
                crashed = True
                break
        seconds = fuzzer.liveness()
        if seconds is None or not alive(options.pid):
            crashed = not alive(options.pid)
            slow_liveness += 1
        else:
            worst_liveness = max(worst_liveness, seconds)
            if seconds > TIMEOUT:
                slow_liveness += 1
        rss = rss_kb(options.pid)
        if rss is not None:
            peak_rss = max(peak_rss, rss)
            if warm_rss is None and fuzzer.calls >= warmup:
                warm_rss = rss
        fuzzer.batch_log = batch
        if crashed or slow_liveness:
            break
    duration = time.monotonic() - started
    end_rss = rss_kb(options.pid)
    growth = (end_rss - warm_rss) if end_rss is not None and warm_rss is not None else None
    summary = {
        "calls": fuzzer.calls, "seconds": round(duration, 1), "calls_per_second": round(fuzzer.calls / max(duration, 1e-9)),
        "replies": dict(sorted(fuzzer.replies.items(), key=lambda item: -item[1])), "timeouts": fuzzer.timeouts,
        "crashes": 1 if crashed else 0, "failed_liveness_checks": slow_liveness,
        "slowest_reply_seconds": round(fuzzer.slowest[0], 3), "slowest_call": fuzzer.slowest[1],
        "slowest_liveness_seconds": round(worst_liveness, 3),
        "rss_kb": {"start": start_rss, "after_warmup": warm_rss, "warmup_calls": warmup, "end": end_rss, "peak": peak_rss, "growth": growth},
        "targets": len(fuzzer.targets), "seed": options.seed, "skipped": sorted(options.skip),
    }
    print("fuzzed %d calls in %.1f s (%d calls/s) over %d methods and properties, seed %d%s" % (
        fuzzer.calls, duration, summary["calls_per_second"], len(fuzzer.targets), options.seed,
        ", skipping " + ", ".join(options.skip) if options.skip else ""))
    for name, count in summary["replies"].items():
        print("  %7d  %s" % (count, name))
    print("timeouts %d, crashes %d, failed liveness checks %d" % (fuzzer.timeouts, summary["crashes"], slow_liveness))
    print("slowest reply %.3f s: %s" % (fuzzer.slowest[0], fuzzer.slowest[1]))
    print("RSS %s KB at start, %s after %d warm-up calls, %s at the end (peak %s): growth %s KB" % (
        start_rss, warm_rss, warmup, end_rss, peak_rss, growth))
    if options.json:
        with open(options.json, "w") as file:
            json.dump(summary, file, indent=2)
    failed = crashed or fuzzer.timeouts or slow_liveness or (growth is not None and growth >= options.max_rss_growth_kb)
    if failed:
        print("FAILED; the last batch's calls:", file=sys.stderr)
        for line in fuzzer.batch_log:
            print("  " + line, file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
