"""What thousands of track loads cost the daemon: RSS after a warm-up, then after N more GoTo
calls, each a track load, and the time a GoTo takes.

Usage: /usr/bin/python3 Benchmarks/Python/track_loads.py DAEMON [--loads N] [--warmup W]
Starts a private bus and DAEMON (a built mpris-bridge) on a generated demo library in a
temporary folder, with `fakesink sync=true`; stops both and removes the folder at the end.
"""
import argparse
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time

import dbus


def rss_kb(pid):
    with open("/proc/%d/status" % pid) as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("daemon")
    parser.add_argument("--loads", type=int, default=10000)
    parser.add_argument("--warmup", type=int, default=500)
    options = parser.parse_args()
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    work = tempfile.mkdtemp(prefix="mpris-bridge-loads-")
    processes = []
    try:
        subprocess.run([root + "/Scripts/make-demo-library", work + "/music"], check=True, stdout=subprocess.DEVNULL)
        subprocess.run([options.daemon, "scan", "--library", work + "/music", "--cache-dir", work + "/cache", "--quiet"],
                       check=True)
        bus = subprocess.Popen(["dbus-daemon", "--session", "--nofork", "--nopidfile", "--print-address=1"],
                               stdout=subprocess.PIPE, text=True)
        processes.append(bus)
        address = bus.stdout.readline().strip()
        environment = dict(os.environ, DBUS_SESSION_BUS_ADDRESS=address)
        log = open(work + "/daemon.log", "w")
        daemon = subprocess.Popen(
            [options.daemon, "--library", work + "/music", "--cache-dir", work + "/cache", "--state-dir",
             work + "/state", "--audio-sink", "fakesink sync=true"], env=environment, stdout=log, stderr=log)
        processes.append(daemon)
        for _ in range(400):
            if "ready:" in open(work + "/daemon.log").read():
                break
            time.sleep(0.05)
        os.environ["DBUS_SESSION_BUS_ADDRESS"] = address
        player = dbus.SessionBus().get_object("org.mpris.MediaPlayer2.mprisbridge", "/org/mpris/MediaPlayer2")
        tracklist = dbus.Interface(player, "org.mpris.MediaPlayer2.TrackList")
        tracks = player.Get("org.mpris.MediaPlayer2.TrackList", "Tracks", dbus_interface="org.freedesktop.DBus.Properties")
        for index in range(options.warmup):
            tracklist.GoTo(tracks[index % len(tracks)])
        before = rss_kb(daemon.pid)
        started = time.monotonic()
        for index in range(options.loads):
            tracklist.GoTo(tracks[index % len(tracks)])
        elapsed = time.monotonic() - started
        after = rss_kb(daemon.pid)
        print("%d track loads (GoTo) after %d: RSS %d -> %d KB (%+d KB), %.2f ms a GoTo" % (
            options.loads, options.warmup, before, after, after - before, elapsed / options.loads * 1000))
    finally:
        for process in reversed(processes):
            process.send_signal(signal.SIGKILL)
            process.wait()
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
