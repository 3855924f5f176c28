"""A hostile MPD client of mpris-bridge: sends malformed and hostile protocol input over the
daemon's MPD socket and checks, after each batch, that the daemon is alive and answering.

Usage: fuzz_mpd.py --socket PATH --pid PID [--requests N] [--seed S] [--idle-clients C]
                   [--parallel-clients P] [--max-rss-growth-kb K] [--json FILE]

Each request is one of: a known command with arguments drawn from hostile values (negative,
huge and non-numeric numbers, NaN, ranges backwards, binary offsets past any file, paths with
`..`, absolute paths, system files, URLs of every scheme, invalid UTF-8, control characters,
filters nested too deep, regular expressions that backtrack, over-long lines); an unknown
command; a command list left open or grown past its bound; pipelined lines; a client that
parks in idle and goes away. Every reply must be `OK`, `ACK [...]` or a closed connection
where the protocol says so (an over-long line, an unterminated or oversized list); a reply
naming a system file is a finding; so is an ACK line that is not one line, and a reply slower
than 5 s. Then P clients (8) send N/5 more such requests between them at once, racing on the
one player and queue (their order depends on the scheduling: a finding there is reproduced by
running the pass again, not by its seed alone). Then C clients connect at once and park in idle, one change wakes them, and the
daemon must answer a fresh client within 5 s.

Clients over the daemon's limit are refused (`idle_refused_after` says after how many); the
ones taken must all be woken.

Prints a summary (JSON with --json): requests and replies by kind, closed connections, findings,
the slowest reply, idle clients taken and woken, RSS growth over the requests after the first
fifth (by then caches are full; sampled every tenth, with the queue cleared) and over their
second half (the bound: the heap settles over the first tens of thousands, a leak climbs on),
and after the idle clients. Exits 1 on a crash, a finding, a
failed liveness check, an idle client taken but not woken, or growth past the limit.
Run with /usr/bin/python3.
"""
import argparse
import json
import os
import random
import re
import socket
import sys
import threading
import time

TIMEOUT = 5.0
# The most commands of one command list (MPDLimits.maximumCommandListLength): one more closes.
MAXIMUM_LIST_LENGTH = 4096
# The daemon's longest request line (MPDLimits.maximumLineBytes): a longer one closes the connection.
MAXIMUM_LINE_BYTES = 8 * 1024
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
    "1:99999", "-1:3", "a:b", "9223372036854775807", "-9223372036854775808", "+9223372036854775807",
    "-9223372036854775807", "0:9223372036854775807", "9223372036854775806:9223372036854775807", "+0", "-0:", "oneshot", "on", "true", "..", "../..", "/", "//", "/etc/passwd",
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
    if kind < 0.93:
        return b"albumart \"Artist/Generated/01 Tone 1.ogg\" " + str(rng.choice([0, 10**12, 2**63, 2**64, -5])).encode() + b"\n", "binary"
    if kind < 0.96:
        return b"lsinfo \"" + b"a" * rng.randint(100, 7000) + b"\"\n", "long"
    if kind < 0.98:
        # Idle left by a client that goes away without a word.
        return b"idle " + rng.choice([b"", b"player", b"mixer playlist", b"database"]) + b"\n", "idle-gone"
    # Idle ended by noidle at once: answered by OK (with what changed, if anything did).
    return b"idle\nnoidle\n", "noidle"


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--socket", required=True)
    parser.add_argument("--pid", type=int, required=True)
    parser.add_argument("--requests", type=int, default=2000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--idle-clients", type=int, default=1000)
    parser.add_argument("--parallel-clients", type=int, default=8)
    parser.add_argument("--max-rss-growth-kb", type=int, default=16384)
    parser.add_argument("--json")
    options = parser.parse_args()
    rng = random.Random(options.seed)
    summary = {"requests": 0, "parallel_requests": 0, "kinds": {}, "replies": {}, "closed": 0, "findings": [], "crashes": 0,
               "slowest_reply_seconds": 0.0, "slowest_request": "", "failed_liveness_checks": 0}

    # The summary is shared with the parallel clients' threads.
    lock = threading.Lock()

    def note(kind):
        with lock:
            summary["replies"][kind] = summary["replies"].get(kind, 0) + 1

    def finding(kind, detail, request):
        with lock:
            summary["findings"].append({"kind": kind, "detail": detail[:300], "reproducer": repr(request)[:300]})

    def settled_rss():
        """RSS once the queue the requests grew is cleared: entries added are state, not a leak."""
        try:
            probe = Client(options.socket)
            probe.send(b"clear\n")
            probe.reply()
            probe.close()
        except Exception:  # noqa: BLE001 - a daemon that does not answer is caught by the liveness checks
            pass
        return rss_kb(options.pid)

    def check_alive():
        if not alive(options.pid):
            with lock:
                summary["crashes"] += 1
            return False
        try:
            probe = Client(options.socket)
            probe.send(b"ping\n")
            if probe.reply() != [b"OK"]:
                with lock:
                    summary["failed_liveness_checks"] += 1
            probe.close()
        except Exception as error:  # noqa: BLE001 - any failure to answer is what is counted
            with lock:
                summary["failed_liveness_checks"] += 1
            finding("liveness", str(error), b"ping")
        return True

    # Warm up: a first round of ordinary reads, so caches fill before RSS is taken.
    warm = Client(options.socket)
    for line in [b"status\n", b"lsinfo\n", b"listallinfo\n", b"playlistinfo\n", b"list album group albumartist\n"]:
        warm.send(line)
        warm.reply()
    warm.close()
    first_rss = rss_kb(options.pid)
    # Growth is measured from the end of a first fifth of the requests: by then every kind of
    # request has filled what it caches (covers, GStreamer's plugins for play, the readers'
    # threads), so what grows after is what the requests leak.
    warm_requests = max(1, min(options.requests // 5, 2000))
    start_rss = first_rss

    def shaped(rng, bound_list=None):
        """A hostile line, sometimes in a command list, left open, or three in one write; or, when
        `bound_list` says, a list of pings at its bound (answered) or one past it (the connection
        closed). With how many replies it gets, whether it must close the connection, and
        whether the client leaves unanswered."""
        if bound_list:
            over = bound_list == "over"
            line = b"command_list_begin\n" + b"ping\n" * (MAXIMUM_LIST_LENGTH + (1 if over else 0)) + b"command_list_end\n"
            return line, ("list-over-bound" if over else "list-at-bound"), 1, over, None
        line, kind = hostile_line(rng)
        shape = rng.random()
        replies, expects_close, leaves = 1, False, None
        if shape < 0.05:
            line = b"command_list_ok_begin\n" + line + line + b"command_list_end\n"
        elif shape < 0.07:
            line, leaves = b"command_list_begin\n" + line, "open-list"
        elif shape < 0.10 and kind != "idle-gone":
            line, replies, kind = line * 3, 3, kind + "-pipelined"
        elif kind == "idle-gone":
            leaves = "idle-gone"
        return line, kind, replies, expects_close, leaves

    def exchange(client, rng, counter, bound_list=None):
        """Sends one shaped request on `client` and checks its answer; returns the client to go
        on with (a new one when this one was closed), or None once the daemon is gone."""
        line, kind, replies, expects_close, leaves = shaped(rng, bound_list)
        with lock:
            summary[counter] += 1
            summary["kinds"][kind] = summary["kinds"].get(kind, 0) + 1
        started = time.monotonic()
        try:
            client.send(line)
            if leaves:
                # A list left open, or an idle, is answered by nothing until it ends (or
                # something changes): close and move on.
                client.close()
                note(leaves)
                return Client(options.socket)
            for _ in range(replies - 1):
                client.reply()
            reply = client.reply()
            if expects_close:
                finding("answered", "a command list over its bound was answered: %r" % reply[-1], line[:60])
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
            with lock:
                summary["closed"] += 1
            note("closed-" + kind)
            # Closing is the protocol's answer to a line over the bound only (a bad line, a bad
            # list entry, an idle in a list are all ACKs).
            too_long = any(len(part) + 1 > MAXIMUM_LINE_BYTES for part in line.split(b"\n"))
            if not too_long and not expects_close:
                finding("closed", "closed after a %s request" % kind, line)
            client.close()
            if not check_alive():
                return None
            client = Client(options.socket)
        except socket.timeout:
            finding("timeout", "no reply within %.0f s" % TIMEOUT, line)
            client.close()
            client = Client(options.socket)
        elapsed = time.monotonic() - started
        with lock:
            if elapsed > summary["slowest_reply_seconds"]:
                summary["slowest_reply_seconds"] = elapsed
                summary["slowest_request"] = line[:120].decode("utf-8", "replace")
        return client

    client = Client(options.socket)
    for number in range(options.requests):
        # A list at its bound and one past it every 500 requests: each is 4,096 commands.
        bound_list = {249: "at", 499: "over"}.get(number % 500)
        client = exchange(client, rng, "requests", bound_list)
        if client is None:
            break
        if number == warm_requests - 1 and alive(options.pid):
            start_rss = settled_rss()
            summary["rss_warm_up_kb"] = start_rss - first_rss
        if number % max(1, options.requests // 10) == 0 and number >= warm_requests and alive(options.pid):
            # The curve tells a leak (growing with the requests) from a plateau.
            summary.setdefault("rss_growth_samples_kb", []).append(settled_rss() - start_rss)
        if number % 200 == 199 and not check_alive():
            break
    client.close()
    if alive(options.pid):
        summary["rss_growth_kb"] = settled_rss() - start_rss
        # The bound: growth over the second half of the requests. The heap settles over the first
        # tens of thousands of requests (fragments the allocator keeps); a leak keeps climbing.
        samples = summary.get("rss_growth_samples_kb", [])
        middle = samples[len(samples) // 2] if samples else 0
        summary["rss_growth_second_half_kb"] = summary["rss_growth_kb"] - middle

    # Clients at once, each sending hostile requests of its own: queue edits, playback and
    # reads racing on the one player and queue.
    def parallel_client(index, count):
        local = random.Random(options.seed * 1000 + index)
        try:
            client = Client(options.socket)
        except OSError as error:
            finding("liveness", "parallel client %d not answered: %s" % (index, error), b"")
            return
        for _ in range(count):
            client = exchange(client, local, "parallel_requests")
            if client is None:
                return
        client.close()

    if alive(options.pid) and options.parallel_clients > 0:
        each = max(1, options.requests // 5 // options.parallel_clients)
        threads = [threading.Thread(target=parallel_client, args=(index, each), daemon=True)
                   for index in range(options.parallel_clients)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        check_alive()

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
        # A client to make the change: at the daemon's client limit, one idle client leaves first.
        changer = None
        deadline = time.monotonic() + TIMEOUT
        while changer is None:
            try:
                changer = Client(options.socket)
            except OSError:
                if time.monotonic() > deadline:
                    raise
                if idle:
                    idle.pop().close()
                time.sleep(0.05)
        changer.send(b"setvol 37\n")
        changer.reply()
        changer.send(b"setvol 38\n")
        changer.reply()
        woken = 0
        # One deadline for them all: clients the change did not wake cost 5 s in all, not each.
        deadline = time.monotonic() + TIMEOUT
        for parked in idle:
            try:
                parked.sock.settimeout(max(0.001, deadline - time.monotonic()))
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
        # What the idle clients left (freed memory the allocator keeps), reported, not bounded:
        # the client limit bounds it.
        summary["rss_growth_with_idle_clients_kb"] = rss_kb(options.pid) - start_rss
    else:
        summary["crashes"] = max(summary["crashes"], 1)
    print(json.dumps(summary, indent=1, sort_keys=True))
    if options.json:
        with open(options.json, "w") as output:
            json.dump(summary, output)
    failed = (summary["crashes"] or summary["findings"] or summary["failed_liveness_checks"]
              or summary.get("idle_woken", 0) < summary.get("idle_clients", 0)
              or summary.get("rss_growth_second_half_kb", 0) > options.max_rss_growth_kb)
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
