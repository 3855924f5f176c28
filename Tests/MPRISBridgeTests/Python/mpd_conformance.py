"""Sends the same MPD command sequences to a real mpd and to mpris-bridge's MPD face over raw
sockets, and compares their answers line by line after normalising what legitimately differs.

Usage: mpd_conformance.py MPD_SOCKET BRIDGE_SOCKET [--text] [--only STEP] [--wait]

With --wait, first waits (at most 20 s) for both sockets to accept and for mpd to have read the
library (an `update`, then until `status` shows no update running and `stats` as many songs as
the bridge).

Both servers must serve the same library, with an empty queue, stopped, volume 100 (mpd with a
software mixer on its null output) and default options. Each command's comparison is printed as
one JSON document per line: {"step", "command", "mpd", "bridge", "equal"}; the last line is
{"summary": {"commands", "different"}}. With --text, a readable report of the differences.

What is normalised, and why:
- song ids (Id, songid, nextsongid): each server numbers its queue entries its own way; ids are
  renamed in order of first appearance within a step, so the same entry has the same name on both;
- playlist versions (`playlist:`; plchanges' VERSION argument is each server's own);
- times that run on (elapsed, time, uptime, playtime, db_update) and a song's duration, which
  decoders measure to different precision (both are rounded to whole seconds; `status`' duration,
  the decoder's own estimate while it plays, is not compared);
- lines mpd writes about the decoded stream that the bridge does not have (Format, audio, bitrate);
- outputs' names and plugins (mpd's is the null output of its test configuration);
- `config`'s music_directory (the same folder, spelled by each).
Everything else must be equal: which keys, their order, their values, ACK codes and messages.
"""

import hashlib
import json
import re
import socket
import sys
import time

TIMEOUT = 10
#: Keys whose value is not compared, only their presence and place.
MASKED = {"elapsed", "time", "uptime", "playtime", "db_update", "outputname", "plugin", "music_directory"}
#: Keys dropped on both sides: what mpd knows of the decoded stream and the bridge may not.
DROPPED = {"Format", "audio", "bitrate"}
ID_KEYS = {"Id", "songid", "nextsongid"}


class Connection:
    """One raw protocol connection: a line out, the answer's lines back (binary kept as a digest)."""

    def __init__(self, path):
        self.socket = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.socket.settimeout(TIMEOUT)
        self.socket.connect(path)
        self.buffer = b""
        greeting = self.read_line()
        assert greeting.startswith("OK MPD "), greeting

    def read_line(self):
        while b"\n" not in self.buffer:
            chunk = self.socket.recv(65536)
            if not chunk:
                raise ConnectionError("connection closed")
            self.buffer += chunk
        line, self.buffer = self.buffer.split(b"\n", 1)
        return line.decode("utf-8", "replace")

    def read_bytes(self, count):
        while len(self.buffer) < count + 1:
            chunk = self.socket.recv(65536)
            if not chunk:
                raise ConnectionError("connection closed")
            self.buffer += chunk
        data, self.buffer = self.buffer[:count], self.buffer[count + 1 :]
        return data

    def send(self, text):
        self.socket.sendall(text.encode() + b"\n")

    def answer(self):
        """The lines up to and including OK or ACK."""
        lines = []
        while True:
            line = self.read_line()
            lines.append(line)
            if line == "OK" or line.startswith("ACK "):
                return lines
            if line.startswith("binary: "):
                data = self.read_bytes(int(line[len("binary: ") :]))
                lines.append("<%d bytes sha1 %s>" % (len(data), hashlib.sha1(data).hexdigest()[:12]))

    def command(self, text):
        self.send(text)
        return self.answer()

    def pairs(self, text):
        return [tuple(line.split(": ", 1)) for line in self.command(text) if ": " in line]

    def value(self, text, key):
        for name, value in self.pairs(text):
            if name == key:
                return value
        return None

    def close(self):
        self.socket.close()


class Server:
    """A server under comparison: its connections and how its ids map to shared names."""

    def __init__(self, name, path):
        self.name = name
        self.path = path
        self.main = Connection(path)
        self.ids = {}
        self.saved_version = None

    def id_name(self, value):
        if value not in self.ids:
            self.ids[value] = "id%d" % (len(self.ids) + 1)
        return self.ids[value]

    def id_at(self, position):
        return self.main.value("playlistinfo %d" % position, "Id")

    def expand(self, text):
        """Fills a command's placeholders with this server's values: {id:N} the id at queue position
        N, {saved} the playlist version saved by a `save-version` step."""
        text = re.sub(r"\{id:(\d+)\}", lambda match: self.id_at(int(match.group(1))) or "999999", text)
        return text.replace("{saved}", str(self.saved_version))

    def wait_for(self, key, wanted):
        deadline = time.monotonic() + TIMEOUT
        while time.monotonic() < deadline:
            if self.main.value("status", key) == wanted:
                return
            time.sleep(0.02)
        raise TimeoutError("%s: status never had %s: %s" % (self.name, key, wanted))

    def wait_elapsed(self, seconds, below=False):
        deadline = time.monotonic() + TIMEOUT
        while time.monotonic() < deadline:
            value = self.main.value("status", "elapsed")
            if value is not None and (float(value) < seconds if below else float(value) >= seconds):
                return
            time.sleep(0.02)
        raise TimeoutError("%s: elapsed never reached %s" % (self.name, seconds))


#: Tags a song lists; mpd lists them in the order the file holds them, the bridge in a fixed order,
#: and clients read them into a dictionary: within one song they are compared sorted.
TAGS = {
    "Artist", "ArtistSort", "Album", "AlbumSort", "AlbumArtist", "AlbumArtistSort", "Title", "Track", "Name",
    "Genre", "Date", "OriginalDate", "Composer", "ComposerSort", "Performer", "Conductor", "Work", "Movement",
    "MovementNumber", "Ensemble", "Location", "Grouping", "Comment", "Disc", "Label", "MUSICBRAINZ_ARTISTID",
    "MUSICBRAINZ_ALBUMID", "MUSICBRAINZ_ALBUMARTISTID", "MUSICBRAINZ_TRACKID", "MUSICBRAINZ_RELEASETRACKID",
    "MUSICBRAINZ_WORKID",
}


def sort_tags(lines):
    """Sorts each run of tag lines that follows a song's `file:` line (a `list` answer is left be)."""
    result, run, in_song = [], [], False
    for line in lines:
        key = line.split(": ", 1)[0] if ": " in line else None
        if in_song and key in TAGS:
            run.append(line)
            continue
        result.extend(sorted(run))
        run = []
        if key == "file":
            in_song = True
        elif key not in ("Last-Modified", "Format"):
            in_song = False
        result.append(line)
    return result + sorted(run)


def normalise(server, lines, masked=()):
    status = any(line.startswith("playlistlength: ") for line in lines)
    lines = sort_tags(lines)
    result = []
    for line in lines:
        if ": " not in line or line.startswith("ACK "):
            result.append(line)
            continue
        key, value = line.split(": ", 1)
        if key in DROPPED:
            continue
        if (key in ("playlist", "duration") and status) or key in MASKED or key in masked:
            value = "*"
        elif key in ID_KEYS:
            value = server.id_name(value)
        elif key in ("duration", "Time"):
            value = str(round(float(value)))
        result.append("%s: %s" % (key, value))
    return result


# A step: (name, [items]); an item is a command line (sent to both, answers compared), or a
# tuple: ("quiet", LINE) sent without comparing, ("wait", KEY, VALUE) until status shows it,
# ("elapsed", SECONDS), ("save-version",), ("mask", KEYS, LINE) compared with KEYS masked,
# ("idle", SETUP_LINES, IDLE_LINE, TRIGGER_LINE) an idle on a second connection woken by TRIGGER.
A = "Sine Wave Ensemble/Pure Tones"
B = "The Square Waves/Hard Edges"
A1 = A + "/01 A Above Middle C.ogg"
A2 = A + "/02 Concert E.flac"
B2 = B + "/02 Saw.ogg"


def q(text):
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


#: Sent quietly before each step: the bridge queues the library when it starts, mpd keeps its last
#: state, and a step starts from an empty, stopped queue with default options.
RESET = ["stop", "clear", "setvol 100", "repeat 0", "random 0", "single 0", "consume 0", "crossfade 0",
         "replay_gain_mode off", "tagtypes all", "binarylimit 8192", "enableoutput 0"]

#: Answers the bridge gives on purpose unlike mpd 0.23, each with why. They are compared and
#: reported, but do not count as differences.
KNOWN = {
    "closes": "mpd closes the connection on an empty line or a line opening with an unclosed quote; "
              "the bridge answers ACK and keeps the client",
    "urlhandlers": "the bridge plays http(s) streams only, not mpd's other input plugins",
    "tagtypes": "the bridge offers the tags its index holds (no Movement, Ensemble, Location...; Comment and "
                "more MusicBrainz ids)",
    "crossfade": "songs follow each other gapless: crossfade N>0 is refused",
    "mixramp": "no MixRamp: the player is gapless",
    "folder-cover": "albumart also finds folder.* and front.* covers, as most players do; mpd 0.23 only cover.*",
    "starts_with": "the filter accepts mpd 0.24's starts_with",
    "stored-playlists": "stored playlists are the library's playlist files, named by their path, read-only",
    "tagtype-message": "an unknown tag type is named in the ACK message",
    "trailing-slash": "a folder named with a trailing slash is the folder (mpd: No such directory)",
    "one-output": "the player plays to one output at a time: disabling the one in use is refused",
    "audio-format": "the index keeps no decoded format: AudioFormat filters are refused",
    "file-urls": "file:// URIs are refused as such (ACK 4), whatever they name; add files by their library path",
    "listfiles": "listfiles (the folder's files as on disk, in readdir order) is not offered",
    "prio": "no priorities: random is the player's shuffle",
    "extinf-name": "mpd gives a playlist's songs its #EXTINF title as their Name tag (Name is a stream's); "
                   "the bridge shows the songs' own tags",
    "idle-clear": "clearing a stopped queue also wakes `player` (its current song is gone)",
}


def known(reason, line):
    return ("known", reason, line)


STEPS = [
    ("empty", ["status", "currentsong", "playlistinfo", "stats"]),
    ("protocol", [
        "ping", "nosuchcommand", "status extra", "add", "play abc", "setvol 101",
        "repeat 2", "single 2", "consume x", "random 3", "outputs", known("urlhandlers", "urlhandlers"),
        "replay_gain_status", "getvol", "config", known("tagtypes", "tagtypes"),
    ]),
    ("closing", [known("closes", ""), known("closes", "\"unterminated")]),
    ("tagtypes", [
        "tagtypes clear", "tagtypes", "find artist " + q("The Square Waves") + " window 0:1",
        "tagtypes enable Artist Title", "tagtypes", "lsinfo " + q(B2),
        "tagtypes disable Artist", "tagtypes", known("tagtype-message", "tagtypes enable Nonsense"), "tagtypes all",
    ]),
    ("lsinfo", [
        "lsinfo", "lsinfo \"\"", "lsinfo /", "lsinfo " + q("Sine Wave Ensemble"), "lsinfo " + q(A),
        "lsinfo " + q(A1), "lsinfo " + q("Missing"), "lsinfo " + q(A + "/missing.ogg"),
        "lsinfo Favourites.m3u", "lsinfo " + q(A + "/Live"), "lsinfo " + q(A + "/best.m3u"),
        "listplaylist " + q(A + "/best.m3u"), known("trailing-slash", "add " + q(A + "/")),
    ]),
    ("listall", [
        "listall", "listall " + q("Sine Wave Ensemble"), "listall " + q(A1), "listall Missing",
        "listallinfo", "listallinfo " + q(B), "listallinfo " + q(A2), known("listfiles", "listfiles " + q(A)),
    ]),
    ("list", [
        "list artist", "list album", "list albumartist", "list title", "list genre", "list date",
        "list track", "list composer", "list file", "list nonsense", "list album " + q("Sine Wave Ensemble"),
        "list album artist " + q("The Square Waves"), "list album group artist", "list title group album",
        "list album \"(artist == 'Sine Wave Ensemble')\"", "list artist \"(album =~ 'Hard')\"",
        "list date group album group artist", "list album artist", "list artist \"\"", "list album group",
        "list file \"(artist == 'The Square Waves')\"",
    ]),
    ("find", [
        "find artist " + q("Sine Wave Ensemble"), "find \"(artist == 'Sine Wave Ensemble')\"",
        "find \"(title contains 'C')\"", "search title c", "search any tones",
        "find \"(artist == 'The Square Waves')\" sort title", "find \"(genre == 'Test Tones')\" sort -title window 1:3",
        "find \"(genre == 'Test Tones')\" window 6:20", "find \"(genre == 'Test Tones')\" window 9:10",
        "find \"(genre == 'Test Tones')\" sort track", "find \"(genre == 'Test Tones')\" sort date",
        "find \"(genre == 'Test Tones')\" sort -date", "find \"(genre == 'Test Tones')\" sort nonsense",
        "find \"(base 'The Square Waves')\"", "find \"(file == '" + A2 + "')\"",
        "find \"(!(artist == 'Sine Wave Ensemble'))\"", "find \"((artist == 'Sine Wave Ensemble') AND (track == '2'))\"",
        "find artist", "find \"(artist ==\"", "find nonsense x", "find artist x sort",
        known("starts_with", "search \"(title starts_with 'H')\""),
        "find \"(modified-since '2000-01-01T00:00:00Z')\" window 0:1", "find any", "find file " + q(B2),
        "search artist SQUARE title SAW", "find \"(album != 'Pure Tones')\"", "find date \"\"",
        "find \"(artist == 'x')\" window 1",
        "count artist " + q("Sine Wave Ensemble"), "count \"(genre == 'Test Tones')\"",
        "count group artist", "count \"(genre == 'Test Tones')\" group album", "count genre Nothing", "count",
        "count group date", "searchcount title c",
    ]),
    ("add", [
        "add " + q(A1), "addid " + q(B2), "addid " + q(A2) + " 0", "add " + q(B), "playlistinfo",
        "add " + q("Missing/file.ogg"), "addid " + q("Missing"), "addid " + q(A1) + " 99",
        "addid " + q(A1) + " +0", "addid " + q(A1) + " -0", "add " + q(A1) + " 1", "add " + q(A) + " 2",
        "status", "playlistinfo 1", "playlistinfo 2:4", "playlistinfo 50", "playlistinfo 3:2",
        "playlistinfo 5:99", "playlistinfo 99:", "playlistinfo -1",
        "playlistid {id:2}", "playlistid 99999", "playlistid", "playlistfind artist " + q("The Square Waves"),
        "playlistsearch title saw", "playlistfind \"(title == 'Saw')\"", "playlist", "play 0",
        ("wait", "state", "play"), "addid " + q(B2) + " +0", "addid " + q(B2) + " -0", "add " + q(A1) + " +1",
        "playlistinfo", "status", "add /", "status", "clear", "add \"\"", "status",
    ]),
    ("edit", [
        "add " + q(A), "add " + q(B),
        ("save-version",), "delete 0", "plchanges {saved}", "plchangesposid {saved}",
        ("save-version",), "move 0 3", "plchanges {saved}", "plchangesposid {saved}",
        ("save-version",), "plchanges {saved}", "plchanges 0", "plchangesposid 0", "plchanges 0 2:4",
        "delete 99", "delete 3:2", "delete 5:99", "move 99 0", "move 0 99", "move 1:3 0", "move 5:9 0",
        "move 0:2 5", "playlistinfo", "deleteid {id:0}", "deleteid 99999", "moveid {id:0} 2", "moveid 99999 0",
        "moveid {id:0} 99", "swap 0 1", "swapid {id:0} {id:1}", "swap 0 99", "playlistinfo",
        known("prio", "prio 1 0"), known("prio", "prioid 1 {id:0}"), "play 2", ("wait", "state", "play"),
        "move 2 0", "status", "delete 0", "status", "delete 1:3", "status", "move 0 3", "status",
        "playlistinfo", "clear", "playlistinfo", "status", "delete 0", "shuffle 0:1", "add " + q(A), "shuffle", "status", ("quiet", "clear"), "add " + q(A),
        "playlistlength_not_a_command", "plchanges -1", "plchangesposid x", "deleteid x", "deleteid -1",
        "playlistid -1", "playlistid x", "swap x 1", "seek 0 -1", "move 0: 1", "delete 0:", "delete 8",
        "shuffle 3:2",
    ]),
    ("playing", [
        "add " + q(A), "add " + q(B), "play 1", ("wait", "state", "play"), "status", "currentsong",
        "pause 1", ("wait", "state", "pause"), "status", "currentsong", "pause 0", ("wait", "state", "play"),
        "next", ("wait", "song", "2"), "status", "currentsong", "previous", ("wait", "song", "1"), "status",
        "playid {id:4}", ("wait", "song", "4"), "status", "currentsong", "play 99", "playid 99999",
        "stop", ("wait", "state", "stop"), "status", "currentsong", "play", ("wait", "state", "play"), "status",
        "stop", ("wait", "state", "stop"), "pause", "status", "clear", "status", "currentsong", "play",
        "pause", "next", "previous",
    ]),
    ("modes", [
        "add " + q(A), "add " + q(B), "play 4", ("wait", "state", "play"), "stop", ("wait", "state", "stop"),
        "repeat 1", "single 1", "status", "single oneshot", "status", "single 0", "repeat 0",
        "consume 1", "status", "play 0", ("wait", "state", "play"), "next", ("wait", "song", "0"), "status",
        "playlistinfo", "consume 0", "stop", ("wait", "state", "stop"), "random 1",
        ("mask", {"nextsong", "nextsongid"}, "status"), "random 0", "status",
        "play 6", ("wait", "state", "play"), "status", "repeat 1", "status", "single 1", "status",
    ]),
    ("seek", [
        "add " + q(A), "add " + q(B),
        "seek 0 5", ("wait", "state", "play"), ("elapsed", 5), "status", "seekcur +2", "seekcur -1", "seekcur 3",
        "seekid {id:1} 2", ("wait", "song", "1"), "status", "seek 99 1", "seekid 99999 1", "seek 0 abc",
        "seekcur x", "pause 1", ("wait", "state", "pause"), "seekcur 4", "status",
        # Past the end the song ends, and the next starts when the decoder says: no status after.
        "seek 0 99999", "stop", ("wait", "state", "stop"), "seekcur 2",
    ]),
    ("volume", [
        "setvol 50", "getvol", "status", "volume +10", "getvol", "volume -100", "getvol", "volume 500",
        "setvol -1", "setvol x", "setvol 100", "getvol", "volume 10", "getvol",
    ]),
    ("options", [
        "crossfade 0", known("crossfade", "crossfade 5"), "crossfade x", "crossfade -1",
        known("mixramp", "mixrampdb 0"), known("mixramp", "mixrampdelay nan"), "replay_gain_mode track",
        "replay_gain_status", "replay_gain_mode nonsense", "replay_gain_mode off", "replay_gain_status",
        "replay_gain_mode album", "replay_gain_status", "replay_gain_mode auto", "replay_gain_status",
    ]),
    ("outputs", ["outputs", "enableoutput 0", "disableoutput 9", "enableoutput 9", "toggleoutput 9",
                 "enableoutput x", "outputs"]),
    ("playlists", [
        known("stored-playlists", "listplaylists"), "listplaylist Missing",
        "listplaylist Favourites.m3u", known("extinf-name", "listplaylistinfo Favourites.m3u"),
        "load Favourites.m3u", "load Favourites.m3u 1:2", "load Missing", "load Favourites.m3u 5:9",
        "load Favourites.m3u 0:1 0", known("extinf-name", "playlistinfo"), "playlist", "clear",
        known("stored-playlists", "rm Favourites.m3u"),
    ]),
    ("findadd", [
        "findadd artist " + q("The Square Waves"), "playlistinfo", "clear",
        "searchadd title c", "playlistinfo", "clear", "findadd \"(title == 'Saw')\" sort title",
        "findadd nonsense", "searchadd \"(album contains 'tones')\" sort -title window 0:2", "playlistinfo",
        "findadd \"(title == 'Saw')\" position 0", "playlistinfo", "clear",
    ]),
    ("artwork", [
        "albumart " + q(A1) + " 0", "albumart " + q(A1) + " 4096", "albumart " + q(A1) + " 15974",
        "albumart " + q(A1) + " 99999999",
        known("folder-cover", "albumart " + q(B2) + " 0"), "albumart " + q("Missing") + " 0", "albumart " + q(A1),
        "binarylimit 100", "albumart " + q(A1) + " 0", "binarylimit 10", "binarylimit 8192",
        "readpicture " + q(A1) + " 0", "readpicture " + q("Missing") + " 0", "albumart " + q(A1) + " x",
    ]),
    ("lists", [
        "command_list_begin\nstatus\ncurrentsong\ncommand_list_end",
        "command_list_ok_begin\nping\nplaylistinfo\ncommand_list_end",
        "command_list_ok_begin\nping\nplay 99\nping\ncommand_list_end",
        "command_list_begin\nping\nnosuch\ncommand_list_end",
        "command_list_begin\nadd " + q(A1) + "\nadd Missing\ncommand_list_end", "playlistinfo",
    ]),
    ("idle", [
        ("idle", "idle playlist", "add " + q(A1)),
        known("idle-clear", ("idle", "idle player playlist", "clear")),
        ("idle", "idle mixer", "setvol 70"),
        ("idle", "idle options", "repeat 1"),
        ("idle", "idle nonsense", None),
        ("idle", "idle", "random 1"),
        ("noidle",),
    ]),
    ("more", [
        "add " + q(A), "add " + q(B), "play 2", ("wait", "state", "play"), "random 1",
        ("mask", {"nextsong", "nextsongid"}, "status"), "random 0", "status", "move 0 +0", "playlistinfo",
        "moveid {id:5} -0", "playlistinfo", "status", "move 2 +1", "addid " + q(B2) + " +1", "playlistinfo",
        "find \"(genre == 'Test Tones')\" sort Last-Modified window 0:3",
        known("audio-format", "find \"(AudioFormat == '44100:f:2')\""),
        known("audio-format", "find \"(AudioFormat =~ '44100:*:2')\""),
        known("file-urls", "add file:///etc/passwd"), known("file-urls", "lsinfo file:///etc"), "currentsong", "pause", ("wait", "state", "pause"),
        "status", "currentsong", "stop", ("wait", "state", "stop"), "status", "delete 2", "status",
        "list album group albumartist", "list albumartist group date", "list genre \"(date == '')\"",
        "count \"(date == '')\"", "find \"(date == '')\"", "search \"(any contains 'edges')\"",
        "find \"(file =~ 'Live')\"", "list title \"(base 'Sine Wave Ensemble/Pure Tones/Live')\"",
        known("one-output", "disableoutput 0"), known("one-output", "outputs"),
    ]),
    ("song-end", [
        # What each mode does when a song ends by itself: a seek to a second before its end.
        "add " + q(A), "single oneshot", "seek 1 19", ("wait", "state", "play"), ("wait", "state", "pause"),
        "status", "currentsong", "stop", ("wait", "state", "stop"),
        "single 1", "seek 1 19", ("wait", "state", "play"), ("wait", "state", "pause"), "status",
        "stop", ("wait", "state", "stop"), "single 0", "consume 1", "seek 1 19", ("wait", "state", "play"),
        ("wait", "playlistlength", "4"), "status", "playlistinfo", "stop", ("wait", "state", "stop"),
        "consume 0", "repeat 1", "single 1", "seek 1 19", ("wait", "state", "play"), ("elapsed-below", 5), "status",
    ]),
    ("final", ["status", "stats"]),
    ("commands", [("commands",)]),
]


def ask(server, line, masked=()):
    """The normalised answer of `server` to `line`; a connection it closes is told and reopened."""
    try:
        return normalise(server, server.main.command(server.expand(line)), masked)
    except ConnectionError:
        server.main.close()
        server.main = Connection(server.path)
        return ["<connection closed>"]


#: Commands the `commands` check does not send bare: they end or park the connection.
NOT_SENT_BARE = {"close", "kill", "idle", "noidle", "command_list_begin", "command_list_ok_begin",
                 "command_list_end", "password"}


def run_step(servers, item, step, emit, reason=None):
    if isinstance(item, str):
        emit(step, item, [ask(s, item) for s in servers], reason)
        return
    kind = item[0]
    if kind == "known":
        run_step(servers, item[2], step, emit, KNOWN[item[1]])
    elif kind == "quiet":
        for s in servers:
            s.main.command(s.expand(item[1]))
    elif kind == "wait":
        for s in servers:
            s.wait_for(item[1], s.expand(item[2]) if "{" in item[2] else item[2])
    elif kind == "elapsed-below":
        for s in servers:
            s.wait_elapsed(item[1], below=True)
    elif kind == "elapsed":
        for s in servers:
            s.wait_elapsed(item[1])
    elif kind == "save-version":
        for s in servers:
            s.saved_version = s.main.value("status", "playlist")
    elif kind == "mask":
        emit(step, item[2] + " (masked: %s)" % ", ".join(sorted(item[1])),
             [ask(s, item[2], item[1]) for s in servers], reason)
    elif kind == "idle":
        _, idle_line, trigger = item
        answers = []
        for s in servers:
            watcher = Connection(s.path)
            watcher.send(idle_line)
            if trigger is not None:
                # The watcher's idle is read before the trigger's line (a ping on it would wake it).
                time.sleep(0.1)
                s.main.command(trigger)
            answers.append(normalise(s, watcher.answer()))
            watcher.close()
        emit(step, idle_line + " woken by " + str(trigger), answers, reason)
    elif kind == "noidle":
        answers = []
        for s in servers:
            watcher = Connection(s.path)
            watcher.send("idle")
            time.sleep(0.1)
            watcher.send("noidle")
            answers.append(watcher.answer())
            answers[-1] += watcher.command("ping")
            watcher.close()
        emit(step, "idle then noidle, then ping", answers, reason)
    elif kind == "commands":
        # The bridge lists fewer commands than mpd; each it lists must be known to it and to mpd.
        mpd, bridge = servers
        mpd_commands = {line.split(": ", 1)[1] for line in mpd.main.command("commands") if ": " in line}
        listed = [line.split(": ", 1)[1] for line in bridge.main.command("commands") if ": " in line]
        unknown = [name for name in listed
                   if name not in NOT_SENT_BARE and ask(bridge, name)[-1].startswith("ACK [5@0]")]
        extra = [name for name in listed if name not in mpd_commands]
        emit(step, "commands: the bridge's are known to it and to mpd", [[], unknown + extra], reason)
        not_mpd = sorted(line.split(": ", 1)[1] for line in mpd.main.command("notcommands") if ": " in line)
        not_bridge = sorted(line.split(": ", 1)[1] for line in bridge.main.command("notcommands") if ": " in line)
        emit(step, "notcommands", [not_mpd, not_bridge], reason)
    else:
        raise ValueError(kind)


def wait_until_ready(mpd_path, bridge_path):
    deadline = time.monotonic() + 20
    connections = []
    for path in (mpd_path, bridge_path):
        while True:
            try:
                connections.append(Connection(path))
                break
            except OSError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.05)
    mpd, bridge = connections
    mpd.command("update")
    songs = bridge.value("stats", "songs")
    while mpd.value("status", "updating_db") is not None or mpd.value("stats", "songs") != songs:
        if time.monotonic() > deadline:
            raise TimeoutError("mpd did not read the library in time")
        time.sleep(0.05)
    mpd.close()
    bridge.close()


def main():
    arguments = sys.argv[1:]
    text = "--text" in arguments
    only = None
    if "--only" in arguments:
        only = arguments[arguments.index("--only") + 1]
        arguments.remove(only)
        arguments.remove("--only")
    if "--wait" in arguments:
        arguments.remove("--wait")
        wait_until_ready(*[a for a in arguments if a != "--text"])
    arguments = [a for a in arguments if a != "--text"]
    servers = [Server("mpd", arguments[0]), Server("bridge", arguments[1])]
    counts = {"commands": 0, "different": 0, "known": 0}

    def emit(step, command, answers, reason=None):
        equal = answers[0] == answers[1]
        counts["commands"] += 1
        if not equal:
            counts["known" if reason else "different"] += 1
        if text:
            if not equal:
                print("=== %s%s: %s" % ("(known) " if reason else "", step, command.replace("\n", " | ")))
                print("  mpd:    " + " | ".join(answers[0]))
                print("  bridge: " + " | ".join(answers[1]))
        else:
            print(json.dumps({"step": step, "command": command, "mpd": answers[0], "bridge": answers[1],
                              "equal": equal, "known": reason}), flush=True)

    for step, items in STEPS:
        if only and only != step:
            continue
        for s in servers:
            s.ids = {}  # ids are named afresh in each step, in order of first appearance
        for line in RESET:
            for s in servers:
                s.main.command(line)
        for s in servers:
            s.wait_for("state", "stop")
        for item in items:
            try:
                run_step(servers, item, step, emit)
            except (TimeoutError, ConnectionError, OSError) as error:
                emit(step, "%r failed" % (item,), [["no failure"], [str(error)]])
                # A connection that failed mid-answer is out of step: start afresh.
                for s in servers:
                    s.main.close()
                    s.main = Connection(s.path)
    if text:
        print("%(different)d of %(commands)d commands answered differently (and %(known)d known differences)"
              % counts)
    else:
        print(json.dumps({"summary": counts}), flush=True)


if __name__ == "__main__":
    main()
