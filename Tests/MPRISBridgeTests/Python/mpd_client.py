"""Drives the daemon's MPD face with python-mpd2 (Home Assistant's and Snapcast's client library)
the way real MPD clients do, and prints what they would see, one JSON document per line.

Usage: mpd_client.py SOCKET SCENARIO [ARGUMENTS...]

Scenarios:
  agl                 Automotive Grade Linux's media backend: an event connection parked in idle,
                      a control connection that queues the whole library, reads the queue, the
                      current song and its embedded picture, plays and pauses.
  home-assistant      Home Assistant's mpd integration: commands once, then each update status,
                      currentsong, listplaylists and the cover; then its actions.
  idle SUBSYSTEM...   Prints {"step": "ready"} once its idle is sent, waits in idle for
                      SUBSYSTEMs and prints what changed and how long after "ready" it woke.
  commands CMD...     Runs each command line with python-mpd2 and prints its result, or its
                      error's text (`[CODE@INDEX] {command} message`). A line is split at spaces,
                      or is a JSON array of words (for arguments holding spaces).
  raw LINE...         Sends each line as it is over a plain socket and prints the reply's lines,
                      `OK` or `ACK ...` last: what any client reads, without a library's parsing.

Pictures are printed as their size and SHA-256, to compare with the bytes embedded.
"""

import hashlib
import json
import socket
import sys
import threading
import time

import mpd


def connect(socket_path):
    client = mpd.MPDClient()
    client.timeout = 20
    client.idletimeout = None
    client.connect(socket_path)
    return client


def emit(**values):
    print(json.dumps(values, sort_keys=True), flush=True)


class Idler:
    """A connection parked in idle on a thread of its own, as an event connection is."""

    def __init__(self, socket_path, *subsystems):
        self.client = connect(socket_path)
        self.changed = None
        self.ready = threading.Event()
        self.done = threading.Event()
        self.thread = threading.Thread(target=self.run, args=subsystems, daemon=True)
        self.thread.start()
        # python-mpd2 writes the command before it blocks reading: wait until it is sent.
        self.ready.wait(5)
        time.sleep(0.05)

    def run(self, *subsystems):
        self.ready.set()
        self.changed = self.client.idle(*subsystems)
        self.done.set()

    def wait(self, timeout=10):
        if not self.done.wait(timeout):
            raise TimeoutError("idle was not woken within %d s" % timeout)
        return sorted(self.changed)


def read_picture(client, uri, command):
    """Reads a whole picture as AGL's backend and Home Assistant do: python-mpd2 asks for it
    chunk by chunk (offset 0, then the bytes read so far) until it has `size` bytes."""
    try:
        response = getattr(client, command)(uri)
    except mpd.CommandError:
        # albumart's answer to a song whose folder has no cover.
        return None
    if not response or "binary" not in response:
        return None
    return bytes(response["binary"])


def digest(data):
    return hashlib.sha256(data).hexdigest() if data else ""


def agl(socket_path):
    control = connect(socket_path)
    emit(step="version", version=control.mpd_version)
    control.clear()
    control.add("/")
    queue = control.playlistinfo()
    emit(step="queue", files=[song["file"] for song in queue], ids=[song["id"] for song in queue])
    emit(step="status", status=control.status())
    events = Idler(socket_path)
    control.play(0)
    emit(step="woken", changed=events.wait())
    current = control.currentsong()
    emit(step="currentsong", song=current)
    picture = read_picture(control, current["file"], "readpicture")
    emit(step="readpicture", size=len(picture) if picture else 0, sha256=digest(picture))
    events = Idler(socket_path, "player")
    control.pause(1)
    emit(step="paused", changed=events.wait(), state=control.status()["state"])
    control.close()


def home_assistant(socket_path):
    client = connect(socket_path)
    commands = client.commands()
    emit(step="commands", has_albumart="albumart" in commands, has_readpicture="readpicture" in commands,
         count=len(commands))
    status = client.status()
    current = client.currentsong()
    playlists = [entry["playlist"] for entry in client.listplaylists()]
    emit(step="update", state=status["state"], volume=status.get("volume"), playlists=playlists,
         title=current.get("title"))
    client.setvol(40)
    client.repeat(1)
    client.single(0)
    client.random(0)
    if playlists:
        client.clear()
        client.load(playlists[0])
    client.play()
    status = client.status()
    current = client.currentsong()
    # Home Assistant asks for the folder's cover first, then for the embedded one.
    picture = read_picture(client, current["file"], "albumart")
    if picture is None:
        picture = read_picture(client, current["file"], "readpicture")
    emit(step="playing", state=status["state"], volume=status["volume"], repeat=status["repeat"],
         title=current.get("title"), file=current["file"], image=len(picture) if picture else 0,
         sha256=digest(picture))
    client.seekcur(2)
    client.pause(1)
    status = client.status()
    emit(step="paused", state=status["state"], elapsed=float(status["elapsed"]))
    client.next()
    emit(step="next", title=client.currentsong().get("title"), state=client.status()["state"])
    client.stop()
    emit(step="stopped", state=client.status()["state"])
    client.close()


def idle(socket_path, subsystems):
    idler = Idler(socket_path, *subsystems)
    emit(step="ready")
    started = time.monotonic()
    changed = idler.wait(30)
    emit(step="woken", changed=changed, seconds=time.monotonic() - started)


def commands(socket_path, lines):
    client = connect(socket_path)
    for line in lines:
        words = json.loads(line) if line.startswith("[") else line.split(" ")
        try:
            result = getattr(client, words[0])(*words[1:])
            emit(command=line, result=result)
        except mpd.CommandError as error:
            emit(command=line, error=str(error))
    client.close()


def raw(socket_path, lines):
    connection = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    connection.settimeout(20)
    connection.connect(socket_path)
    stream = connection.makefile("rwb")
    stream.readline()
    for line in lines:
        stream.write(line.encode("utf-8", "surrogateescape") + b"\n")
        stream.flush()
        reply = []
        while True:
            answer = stream.readline()
            if not answer:
                reply.append("(closed)")
                break
            reply.append(answer.rstrip(b"\n").decode("utf-8", "replace"))
            if answer == b"OK\n" or answer.startswith(b"ACK "):
                break
        emit(command=line, reply=reply)
    connection.close()


def main():
    socket_path, scenario = sys.argv[1], sys.argv[2]
    if scenario == "agl":
        agl(socket_path)
    elif scenario == "home-assistant":
        home_assistant(socket_path)
    elif scenario == "idle":
        idle(socket_path, sys.argv[3:])
    elif scenario == "commands":
        commands(socket_path, sys.argv[3:])
    elif scenario == "raw":
        raw(socket_path, sys.argv[3:])
    else:
        sys.exit("unknown scenario " + scenario)


if __name__ == "__main__":
    main()
