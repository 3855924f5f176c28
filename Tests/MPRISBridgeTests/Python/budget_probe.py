"""Measures the daemon's cheap figures for the test command's regression check.

Usage: budget_probe.py STARTS BUS_NAME DAEMON [ARGUMENT...]

On the session bus of the environment: starts DAEMON with its arguments STARTS times, each
time timing exec -> BUS_NAME owned (NameOwnerChanged), then stopping it with SIGTERM and
waiting for the name to go; before each, times `DAEMON --help` from exec to exit (loading the
executable and its libraries and starting the runtime, the part of a start that moves with the
machine's speed). A last start plays (Player.Play, waiting for PlaybackStatus
Playing), pauses (waiting for Paused), lets the process settle for 2 s, then reads its resident
set and counts the context switches of all its threads over 2 s. Prints one JSON object:
{"execToNameMilliseconds": [...], "execToHelpExitMilliseconds": [...], "rssPausedKiB": N,
"switchesPausedPerSecond": X}.
Exit status 1, with the reason on stderr, when a wait runs out (20 s).
"""

import json
import os
import signal
import subprocess
import sys
import time

import dbus
import dbus.mainloop.glib
from gi.repository import GLib

starts = int(sys.argv[1])
name = sys.argv[2]
command = sys.argv[3:]
dbus.mainloop.glib.DBusGMainLoop(set_as_default=True)
bus = dbus.SessionBus()
loop = GLib.MainLoop()
events = []


def owner_changed(changed, old, new):
    if changed == name:
        events.append(("owner", time.monotonic(), str(new)))
        loop.quit()


def properties_changed(interface, changed, invalidated):
    if "PlaybackStatus" in changed:
        events.append(("status", time.monotonic(), str(changed["PlaybackStatus"])))
        loop.quit()


bus.add_signal_receiver(owner_changed, "NameOwnerChanged", "org.freedesktop.DBus", arg0=name)
bus.add_signal_receiver(properties_changed, "PropertiesChanged", "org.freedesktop.DBus.Properties",
                        path="/org/mpris/MediaPlayer2")


def wait_for(kind, value_holds, what):
    deadline = time.monotonic() + 20
    while True:
        for index, event in enumerate(events):
            if event[0] == kind and value_holds(event[2]):
                del events[: index + 1]
                return event[1]
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            sys.exit(f"waited 20 s for {what}")
        fired = []

        def timed_out():
            fired.append(True)
            loop.quit()
            return False

        source = GLib.timeout_add(int(remaining * 1000) + 1, timed_out)
        loop.run()
        if not fired:
            GLib.source_remove(source)


def start():
    events.clear()
    began = time.monotonic()
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    owned = wait_for("owner", lambda owner: owner != "", f"{name} to be owned")
    return process, (owned - began) * 1000


def stop(process):
    process.send_signal(signal.SIGTERM)
    wait_for("owner", lambda owner: owner == "", f"{name} to go")
    process.wait(timeout=20)


def switches(pid):
    total = 0
    for task in os.listdir(f"/proc/{pid}/task"):
        try:
            with open(f"/proc/{pid}/task/{task}/status") as status:
                for line in status:
                    if line.startswith(("voluntary_ctxt_switches", "nonvoluntary_ctxt_switches")):
                        total += int(line.split()[1])
        except FileNotFoundError:
            pass
    return total


def rss_kib(pid):
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


times = []
help_times = []
for _ in range(starts):
    began = time.monotonic()
    subprocess.run([command[0], "--help"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    help_times.append((time.monotonic() - began) * 1000)
    process, elapsed = start()
    times.append(elapsed)
    stop(process)

process, _ = start()
try:
    proxy = bus.get_object(name, "/org/mpris/MediaPlayer2")
    player = dbus.Interface(proxy, "org.mpris.MediaPlayer2.Player")
    # The name is taken before the queue is restored; Play needs the queue.
    deadline = time.monotonic() + 20
    while not proxy.Get("org.mpris.MediaPlayer2.Player", "Metadata", dbus_interface="org.freedesktop.DBus.Properties"):
        if time.monotonic() > deadline:
            sys.exit("waited 20 s for the queue")
        time.sleep(0.05)
    player.Play()
    wait_for("status", lambda status: status == "Playing", "PlaybackStatus Playing")
    player.Pause()
    wait_for("status", lambda status: status == "Paused", "PlaybackStatus Paused")
    # A measuring window, not a wait for an event: what the process does once left alone.
    time.sleep(2)
    rss = rss_kib(process.pid)
    before = switches(process.pid)
    time.sleep(2)
    per_second = (switches(process.pid) - before) / 2
finally:
    stop(process)
print(json.dumps({"execToNameMilliseconds": times, "execToHelpExitMilliseconds": help_times, "rssPausedKiB": rss,
                  "switchesPausedPerSecond": per_second}))
