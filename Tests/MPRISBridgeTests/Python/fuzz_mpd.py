"""A hostile MPD client of mpris-bridge: sends malformed and hostile protocol input over the
daemon's MPD socket and checks, after each batch, that the daemon is alive and answering.

Usage: fuzz_mpd.py --socket PATH --pid PID [--requests N] [--seed S] [--idle-clients C]
                   [--max-rss-growth-kb K] [--json FILE]

Each request is one of: a known command with arguments drawn from hostile values (negative,
huge and non-numeric numbers, NaN, ranges backwards, binary offsets past any file, paths with
`..`, absolute paths, system files, URLs of every scheme, invalid UTF-8, control characters,
filters nested too deep, regular expressions that backtrack, over-long lines); an unknown
command; a command list left open or grown past its bound; pipelined lines; a client that
parks in idle and goes away. Every reply must be `OK`, `ACK [...]` or a closed connection
where the protocol says so (an over-long line, an unterminated or oversized list); a reply
naming a system file is a finding; so is an ACK line that is not one line, and a reply slower
than 5 s. Then C clients connect at once and park in idle, one change wakes them, and the
daemon must answer a fresh client within 5 s.

Prints a summary (JSON with --json): requests, replies by kind, closed connections, findings,
the slowest reply, RSS growth. Exits 1 on a crash, a finding or growth past the limit.
Run with /usr/bin/python3.
"""
import argparse
import json
import os
import random
import re
import socket
import sys
import time

TIMEOUT = 5.0
# MPD's error line: ACK [code@index] {command} message, all on one line.
ACK_LINE = re.compile(rb"^ACK \[\d+@\d+\] \{[^}\n]*\} [^\n\r]*$")
SYSTEM_FILES = ("/etc/passwd", "/etc/shadow", "root:x:0:0")

COMMANDS = [
    "status", "currentsong", "stats", "play", "playid", "pause", "stop", "next", "previous", "seek",
    "seekid", "seekcur", "setvol", "getvol", "volume", "repeat", "random", "single", "consume",
    "crossfade", "add", "addid", "delete", "deleteid", "move", "moveid", "clear", "shuffle",
    "playlistinfo", "playlistid", "plchanges", "plchangesposid", "listplaylists", "listplaylist",
    "listplaylistinfo", "load", "lsinfo", "listall", "listallinfo", "list", "find", "search",
    "findadd", "searchadd", "count", "tagtypes", "albumart", "readpicture", "update", "rescan",
    "outputs", "enableoutput", "disableoutput", "toggleoutput", "replay_gain_mode",
    "replay_gain_status", "ping", "commands", "notcommands", "binarylimit", "urlhandlers",
    "config", "password",
]

VALUES = [
    "", "0", "1", "-1", "2", "99999999999999999999", "-99999999999999999999", "4294967296",
    "nan", "NaN", "inf", "-inf", "1e308", "0x10", "1.5", "+3", "-0", "0:", ":5", "5:2", "0:1",
    "1:99999", "-1:3", "a:b", "oneshot", "on", "true", "..", "../..", "/", "//", "/etc/passwd",
    "../../../../etc/passwd", "Artist/../../etc", "file:///etc/passwd", "file:///dev/zero",
    "http://127.0.0.1:1/x.mp3", "https://[::1]:1/a", "ftp://x/y", "javascript:1", "data:,x",
    "Artist", "Artist/Generated", "Mix.m3u", "Favourites.m3u", "nonexistent.m3u",
    "artist", "Album", "AlbumArtist", "group", "sort", "window", "position", "any", "file", "base",
    "modified-since", "Title", "Track", "Performer", "(Artist == 'x')", "(Artist =~ '(a+)+$')",
    "(!(Artist == 'x'))", "((Artist == 'a') AND (Album != 'b'))", "(Title contains '')",
    "(base '/')", "(base '../..')", "(modified-since 'yesterday')", "(", ")", "((((((((",
    "(Artist == 'unterminated", "(Artist ~= 'x')", "(file == '/etc/passwd')",
    "(" * 40 + "Artist == 'x'" + ")" * 40, "(Artist =~ '" + "(a*)*" * 30 + "b')",
    "x" * 5000, "\u00e9\u00e8", "\u202e", "\x01\x02", "player", "mixer", "nosuchsubsystem",
    "read,add", "secret",
]


def quote(value):
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'


class Client:
    def __init__(self, path):
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.settimeout(TIMEOUT)
        self.sock.connect(path)
        self.buffer = b""
        greeting = self.read_line()
        if not greeting.startswith(b"OK MPD "):
            raise RuntimeError("bad greeting %r" % greeting)

    def read_line(self):
        while b"\n" not in self.buffer:
            data = self.sock.recv(65536)
            if not data:
                raise ConnectionResetError("closed")
            self.buffer += data
            if len(self.buffer) > 64 * 1024 * 1024:
                raise RuntimeError("a reply over 64 MiB")
        line, self.buffer = self.buffer.split(b"\n", 1)
        return line

    def read_bytes(self, count):
        while len(self.buffer) < count + 1:
            data = self.sock.recv(65536)
            if not data:
                raise ConnectionResetError("closed")
            self.buffer += data
        data, self.buffer = self.buffer[:count], self.buffer[count + 1:]
        return data

    def send(self, data):
        self.sock.sendall(data)

    def reply(self):
        """Reads one reply: its lines up to OK or ACK (binary chunks skipped)."""
        lines = []
        while True:
            line = self.read_line()
            if line.startswith(b"binary: "):
                self.read_bytes(int(line[8:]))
                continue
            lines.append(line)
            if line == b"OK" or line.startswith(b"ACK "):
                return lines

    def close(self):
        try:
            self.sock.close()
        except OSError:
            pass


def rss_kb(pid):
    with open("/proc/%d/status" % pid) as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


def alive(pid):
    return os.path.exists("/proc/%d" % pid)


def hostile_line(rng):
    kind = rng.random()
    if kind < 0.70:
        command = rng.choice(COMMANDS)
        if command == "password":
            command = "ping"
        arguments = [rng.choice(VALUES) for _ in range(rng.randint(0, 4))]
        text = command + "".join(" " + (quote(a) if rng.random() < 0.8 else a.replace(" ", "")) for a in arguments)
        return text.encode("utf-8", "surrogateescape") + b"\n", "command"
    if kind < 0.78:
        return b"nosuch_" + str(rng.randint(0, 9)).encode() + b"\n", "unknown"
    if kind < 0.84:
        return rng.choice([b"status \xff\xfe\n", b"find \"\xc3\x28\"\n", b"\xed\xa0\x80\n", b"add \"\x00\"\n"]), "utf8"
    if kind < 0.90:
        return b"find \"" + b"(" * rng.randint(1, 200) + b"Artist == 'x'" + b")" * rng.randint(0, 200) + b"\"\n", "filter"
    if kind < 0.95:
        return b"albumart \"Artist/Generated/01 Tone 1.ogg\" " + str(rng.choice([0, 10**12, 2**63, 2**64, -5])).encode() + b"\n", "binary"
    return b"lsinfo \"" + b"a" * rng.randint(100, 7000) + b"\"\n", "long"


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--socket", required=True)
    parser.add_argument("--pid", type=int, required=True)
    parser.add_argument("--requests", type=int, default=2000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--idle-clients", type=int, default=1000)
    parser.add_argument("--max-rss-growth-kb", type=int, default=16384)
    parser.add_argument("--json")
    options = parser.parse_args()
    rng = random.Random(options.seed)
    summary = {"requests": 0, "replies": {}, "closed": 0, "findings": [], "crashes": 0,
               "slowest_reply_seconds": 0.0, "slowest_request": "", "failed_liveness_checks": 0}

    def note(kind):
        summary["replies"][kind] = summary["replies"].get(kind, 0) + 1

    def finding(kind, detail, request):
        summary["findings"].append({"kind": kind, "detail": detail[:300], "reproducer": repr(request)[:300]})

    def check_alive():
        if not alive(options.pid):
            summary["crashes"] += 1
            return False
        try:
            probe = Client(options.socket)
            probe.send(b"ping\n")
            if probe.reply() != [b"OK"]:
                summary["failed_liveness_checks"] += 1
            probe.close()
        except Exception as error:  # noqa: BLE001 - any failure to answer is what is counted
            summary["failed_liveness_checks"] += 1
            finding("liveness", str(error), b"ping")
        return True

    # Warm up: a first round of ordinary reads, so caches fill before RSS is taken.
    warm = Client(options.socket)
    for line in [b"status\n", b"lsinfo\n", b"listallinfo\n", b"playlistinfo\n", b"list album group albumartist\n"]:
        warm.send(line)
        warm.reply()
    warm.close()
    start_rss = rss_kb(options.pid)

    client = Client(options.socket)
    for number in range(options.requests):
        line, kind = hostile_line(rng)
        # Sometimes a command list around it, left open, or sent twice in one write.
        shape = rng.random()
        if shape < 0.05:
            line = b"command_list_ok_begin\n" + line + line + b"command_list_end\n"
        elif shape < 0.07:
            line = b"command_list_begin\n" + line
        summary["requests"] += 1
        started = time.monotonic()
        try:
            client.send(line)
            if shape >= 0.05 and shape < 0.07:
                # A list left open is answered by nothing until it ends: close and move on.
                client.close()
                client = Client(options.socket)
                note("open-list")
                continue
            reply = client.reply()
            last = reply[-1]
            if last == b"OK":
                note("OK")
            elif last.startswith(b"ACK ["):
                note("ACK")
                if not ACK_LINE.match(last):
                    finding("ack", repr(last), line)
            else:
                finding("reply", repr(last), line)
            text = b"\n".join(reply)
            for system_file in SYSTEM_FILES:
                if system_file.encode() in text and system_file.encode() not in line:
                    finding("system-file", text[:200].decode("utf-8", "replace"), line)
        except (ConnectionResetError, BrokenPipeError):
            summary["closed"] += 1
            note("closed-" + kind)
            if kind not in ("long", "utf8", "filter") and b"command_list" not in line and b"close" not in line:
                finding("closed", "closed after a %s request" % kind, line)
            client.close()
            if not check_alive():
                break
            client = Client(options.socket)
        except socket.timeout:
            finding("timeout", "no reply within %.0f s" % TIMEOUT, line)
            client.close()
            client = Client(options.socket)
        elapsed = time.monotonic() - started
        if elapsed > summary["slowest_reply_seconds"]:
            summary["slowest_reply_seconds"] = elapsed
            summary["slowest_request"] = line[:120].decode("utf-8", "replace")
        if number % 200 == 199 and not check_alive():
            break
    client.close()

    # Thousands of idle clients at once, all woken by one change, then a fresh client answered.
    idle = []
    if alive(options.pid):
        try:
            for _ in range(options.idle_clients):
                parked = Client(options.socket)
                parked.send(b"idle player mixer options\n")
                idle.append(parked)
        except OSError as error:
            summary["idle_refused_after"] = len(idle)
            summary["idle_refusal"] = str(error)
        changer = Client(options.socket)
        changer.send(b"setvol 37\n")
        changer.reply()
        changer.send(b"setvol 38\n")
        changer.reply()
        woken = 0
        for parked in idle:
            try:
                reply = parked.reply()
                if reply[-1] == b"OK":
                    woken += 1
            except Exception:  # noqa: BLE001 - a client the daemon closed (over its bound) counts as not woken
                pass
            parked.close()
        summary["idle_clients"] = len(idle)
        summary["idle_woken"] = woken
        started = time.monotonic()
        check_alive()
        summary["fresh_client_seconds"] = time.monotonic() - started
        changer.close()

    if alive(options.pid):
        summary["rss_growth_kb"] = rss_kb(options.pid) - start_rss
    else:
        summary["crashes"] = max(summary["crashes"], 1)
    print(json.dumps(summary, indent=1, sort_keys=True))
    if options.json:
        with open(options.json, "w") as output:
            json.dump(summary, output)
    failed = (summary["crashes"] or summary["findings"] or summary["failed_liveness_checks"]
              or summary.get("rss_growth_kb", 0) > options.max_rss_growth_kb)
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
