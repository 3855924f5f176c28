"""The daemon on a large library, measured by hand until the scale benchmark lands.

Usage: /usr/bin/python3 Benchmarks/Python/scale_probe.py DAEMON [--tracks N] [--folder DIR]

Generates (once, in DIR, default /tmp/mpris-bridge-scale-N) N tagged Ogg Vorbis tracks, 12 to an
album, 1 to 6 albums to an artist folder, by copying 8 one-second tones made with gst-launch and
tagging each copy with mutagen (`pip install mutagen`). Then, with DAEMON (a release build of
mpris-bridge) on a private dbus-daemon: a cold index (the page cache dropped when allowed), a
start on a fresh state and its RSS, a walk of the whole tree in pages of 100 with every property,
bytes written per track change, the track list's length, a file moved in until the Tracks tab's
Updated, an unchanged Rescan, and a restart with the queue restored. Every process it starts is
stopped by its pid.
"""
import argparse, os, random, shutil, signal, subprocess, sys, time

import dbus, dbus.mainloop.glib
from gi.repository import GLib

TREE = "org.gnome.UPnP.MediaServer2.mprisbridge"
ROOT = "/org/gnome/UPnP/MediaServer2/mprisbridge"
PLAYER = "org.mpris.MediaPlayer2.mprisbridge"


def generate(folder, tracks):
    music = os.path.join(folder, "music")
    if os.path.exists(os.path.join(folder, "complete")):
        return music
    try:
        from mutagen.oggvorbis import OggVorbis
    except ImportError:
        sys.exit("mutagen is needed to tag the generated files: pip install mutagen")
    shutil.rmtree(folder, ignore_errors=True)
    os.makedirs(os.path.join(folder, "tones"))
    tones = []
    for index in range(8):
        tone = os.path.join(folder, "tones", "t%d.ogg" % index)
        subprocess.run(["gst-launch-1.0", "-q", "audiotestsrc", "num-buffers=10", "samplesperbuffer=4410",
                        "freq=%d" % (300 + 50 * index), "!", "audio/x-raw,rate=44100,channels=2", "!", "audioconvert",
                        "!", "vorbisenc", "quality=0.1", "!", "oggmux", "!", "filesink", "location=" + tone], check=True)
        tones.append(tone)
    rng = random.Random(7)
    words = "love night river fire light dream heart rain stone blue summer winter shadow gold road home sky song".split()
    made, album, artist = 0, 0, 0
    while made < tracks:
        artist += 1
        for _ in range(rng.randint(1, 6)):
            album += 1
            folder_path = os.path.join(music, "Artist %04d" % artist, "Album %05d" % album)
            os.makedirs(folder_path, exist_ok=True)
            for number in range(1, 13):
                if made >= tracks:
                    break
                title = "%s %s %d" % (rng.choice(words), rng.choice(words), number)
                path = os.path.join(folder_path, "%02d %s.ogg" % (number, title))
                shutil.copyfile(tones[made % 8], path)
                tags = OggVorbis(path)
                tags.update({"title": title.title(), "artist": "Artist %04d" % artist, "album": "Album %05d" % album,
                             "albumartist": "Artist %04d" % artist, "tracknumber": str(number),
                             "date": str(1960 + album % 60), "genre": rng.choice(["Rock", "Jazz", "Pop", "Folk"])})
                tags.save()
                made += 1
    open(os.path.join(folder, "complete"), "w").close()
    print("generated %d tracks in %d albums by %d artists" % (made, album, artist))
    return music


def status(pid, key):
    for line in open("/proc/%d/status" % pid):
        if line.startswith(key + ":"):
            return int(line.split()[1])


def io(pid, key):
    for line in open("/proc/%d/io" % pid):
        if line.startswith(key + ":"):
            return int(line.split()[1])


class Daemon:
    """The daemon on a private bus; `stop()` ends both."""

    def __init__(self, daemon, folder, music):
        self.bus = subprocess.Popen(["dbus-daemon", "--session", "--nofork", "--nopidfile", "--print-address=1"],
                                    stdout=subprocess.PIPE, text=True)
        self.address = self.bus.stdout.readline().strip()
        os.environ["DBUS_SESSION_BUS_ADDRESS"] = self.address
        self.log_path = os.path.join(folder, "daemon.log")
        self.log = open(self.log_path, "w")
        started = time.monotonic()
        self.process = subprocess.Popen(
            [daemon, "--library", music, "--cache-dir", os.path.join(folder, "cache"),
             "--state-dir", os.path.join(folder, "state"), "--audio-sink", "fakesink sync=true"],
            stdout=self.log, stderr=subprocess.STDOUT)
        self.ready = self.wait_for("the media tree shows the scan's") - started

    def wait_for(self, text, timeout=120):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if text in open(self.log_path).read():
                return time.monotonic()
            time.sleep(0.02)
        raise RuntimeError("no '%s' in %s" % (text, self.log_path))

    def stop(self):
        self.process.send_signal(signal.SIGTERM)
        self.process.wait(timeout=30)
        self.bus.kill()
        self.bus.wait()


def walk(bus):
    latencies, stack, containers, rows = [], [ROOT], 0, 0
    started = time.monotonic()
    while stack:
        container = dbus.Interface(bus.get_object(TREE, stack.pop()), "org.gnome.UPnP.MediaContainer2")
        offset = 0
        while True:
            before = time.monotonic()
            page = container.ListChildren(dbus.UInt32(offset), dbus.UInt32(100), ["*"])
            latencies.append(time.monotonic() - before)
            for row in page:
                if str(row["Type"]) == "container":
                    stack.append(str(row["Path"]))
                    containers += 1
                else:
                    rows += 1
            if len(page) < 100:
                break
            offset += 100
    latencies.sort()
    print("walk: %.1f s, %d calls, %d containers, %d items; a page median %.1f ms, worst %.0f ms"
          % (time.monotonic() - started, len(latencies), containers, rows,
             latencies[len(latencies) // 2] * 1000, latencies[-1] * 1000))


def moved_in(bus, music, tone):
    tab = dbus.Interface(bus.get_object(TREE, ROOT + "/tracks"), "org.gnome.UPnP.MediaContainer2")
    tab.ListChildren(dbus.UInt32(0), dbus.UInt32(100), ["*"])
    loop, result = GLib.MainLoop(), {}

    def updated(path=None):
        if str(path) == ROOT + "/tracks" and "seconds" not in result:
            result["seconds"] = time.monotonic() - started
            loop.quit()

    bus.add_signal_receiver(updated, signal_name="Updated", dbus_interface="org.gnome.UPnP.MediaContainer2",
                            path_keyword="path")
    bus.get_name_owner(TREE)
    staged = os.path.join(os.path.dirname(music), "incoming.ogg")
    shutil.copyfile(tone, staged)
    target = os.path.join(music, "Artist 0001", "zz moved in.ogg")
    started = time.monotonic()
    os.rename(staged, target)
    GLib.timeout_add(20000, loop.quit)
    loop.run()
    os.unlink(target)
    print("a file moved in -> Updated of the Tracks tab: %.2f s" % result.get("seconds", float("nan")))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("daemon")
    parser.add_argument("--tracks", type=int, default=50000)
    parser.add_argument("--folder")
    options = parser.parse_args()
    folder = options.folder or "/tmp/mpris-bridge-scale-%d" % options.tracks
    music = generate(folder, options.tracks)
    for name in ("cache", "state"):
        shutil.rmtree(os.path.join(folder, name), ignore_errors=True)
    subprocess.run(["sync"])
    try:
        open("/proc/sys/vm/drop_caches", "w").write("3\n")
        cache = "dropped"
    except OSError:
        cache = "warm (not allowed to drop it)"
    scan = subprocess.run([options.daemon, "scan", "--library", music, "--cache-dir", os.path.join(folder, "cache"),
                           "--no-notify"], capture_output=True, text=True)
    print("index, page cache %s: %s" % (cache, scan.stdout.strip().split(". ", 1)[-1]))

    dbus.mainloop.glib.DBusGMainLoop(set_as_default=True)
    daemon = Daemon(options.daemon, folder, music)
    try:
        pid = daemon.process.pid
        print("fresh start: tree ready %.2f s; RSS %d MB (anonymous %d MB)"
              % (daemon.ready, status(pid, "VmRSS") // 1024, status(pid, "RssAnon") // 1024))
        bus = dbus.SessionBus()
        walk(bus)
        print("after the walk: RSS %d MB" % (status(pid, "VmRSS") // 1024))
        player = dbus.Interface(bus.get_object(PLAYER, "/org/mpris/MediaPlayer2"), "org.mpris.MediaPlayer2.Player")
        written = io(pid, "wchar")
        for _ in range(20):
            player.Next()
        time.sleep(1)
        print("written per track change: %d bytes" % ((io(pid, "wchar") - written) // 20))
        tracks = bus.get_object(PLAYER, "/org/mpris/MediaPlayer2").Get(
            "org.mpris.MediaPlayer2.TrackList", "Tracks", dbus_interface="org.freedesktop.DBus.Properties")
        print("TrackList.Tracks: %d ids" % len(tracks))
        moved_in(bus, music, os.path.join(folder, "tones", "t1.ogg"))
        root = dbus.Interface(bus.get_object(TREE, ROOT), "org.mprisbridge.MediaRoot1")
        started = time.monotonic()
        root.Rescan(timeout=120)
        print("Rescan of the unchanged library: %.2f s" % (time.monotonic() - started))
    finally:
        daemon.stop()
    daemon = Daemon(options.daemon, folder, music)
    try:
        pid = daemon.process.pid
        print("restart, queue restored: tree ready %.2f s; RSS %d MB (anonymous %d MB)"
              % (daemon.ready, status(pid, "VmRSS") // 1024, status(pid, "RssAnon") // 1024))
    finally:
        daemon.stop()


if __name__ == "__main__":
    main()
