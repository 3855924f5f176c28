#!/usr/bin/python3
"""The daemon's processor time for pages of the Tracks tab, beside the bus's.

Starts BINARY on a private bus with a copy of the index in FOLDER/cache (made by ScaleBenchmark,
its root pointed at FOLDER/music), `--no-scan --no-watch`, lists 40 pages to warm up, then
--pages pages of 100 tracks with --filter at offsets spread over the tab as ScaleBenchmark
spreads them, and prints the daemon's and the bus's CPU per page (utime + stime from /proc).
--hold writes the daemon's pid to HOLD/pid and waits for HOLD/go.flag before the pages, to attach
perf (`perf record --call-graph dwarf -p $(cat HOLD/pid)`, then `touch HOLD/go.flag`).

usage: tree_pages.py BINARY [--folder Benchmarks/.build/scale-50000] [--pages 400] [--filter '*'] [--hold DIR]"""
import os, sys, subprocess, time, shutil, tempfile, argparse
import dbus
def log(*m): print(*m, file=sys.stderr, flush=True)
ap = argparse.ArgumentParser()
ap.add_argument("binary"); ap.add_argument("--pages", type=int, default=400)
ap.add_argument("--filter", default="*"); ap.add_argument("--folder", default="Benchmarks/.build/scale-50000")
ap.add_argument("--hold", help="a folder: write the pid there and wait for go.flag in it before the pages")
a = ap.parse_args(); a.binary = os.path.abspath(a.binary); a.folder = os.path.abspath(a.folder)
tmp = tempfile.mkdtemp(prefix="walkpages")
cache = os.path.join(tmp, "cache"); shutil.copytree(os.path.join(a.folder, "cache"), cache)
state = os.path.join(tmp, "state"); os.makedirs(state)
import sqlite3
c = sqlite3.connect(os.path.join(cache, "index.sqlite")); c.execute("update settings set value=? where key='root'", (os.path.join(a.folder, "music"),)); c.commit(); c.close()
bus = subprocess.Popen(["dbus-daemon", "--session", "--nofork", "--print-address=1", "--print-pid=1"], stdout=subprocess.PIPE, text=True)
addr = bus.stdout.readline().strip(); buspid = int(bus.stdout.readline().strip()); log("bus", addr, buspid)
env = dict(os.environ, DBUS_SESSION_BUS_ADDRESS=addr, XDG_CACHE_HOME=tmp, HOME=tmp)
try:
    d = subprocess.Popen([a.binary, "--library", os.path.join(a.folder, "music"), "--cache-dir", cache, "--state-dir", state,
        "--audio-sink", "fakesink", "--name", "walkb", "--no-scan", "--no-watch", "--mpd-port", "0", "--mpd-socket", state + "/mpd.sock"],
        env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
except BaseException:
    bus.terminate(); bus.wait(); raise
def ticks(pid):
    f = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
    return int(f[11]) + int(f[12])
try:
    conn = dbus.bus.BusConnection(addr)
    name = "org.gnome.UPnP.MediaServer2.walkb"; root = "/org/gnome/UPnP/MediaServer2/walkb"
    t0 = time.time()
    while True:
        try:
            obj = conn.get_object(name, root + "/tracks")
            cnt = int(obj.Get("org.gnome.UPnP.MediaContainer2", "ChildCount", dbus_interface="org.freedesktop.DBus.Properties"))
            if cnt > 0: break
        except dbus.DBusException: pass
        if time.time() - t0 > 60: raise SystemExit("no tree")
        time.sleep(0.05)
    it = dbus.Interface(obj, "org.gnome.UPnP.MediaContainer2")
    pages = max(1, cnt // 100)
    filt = a.filter.split(",")
    for i in range(40): it.ListChildren(dbus.UInt32((i * 37 % pages) * 100), dbus.UInt32(100), filt)
    if a.hold:
        open(os.path.join(a.hold, "pid"), "w").write(str(d.pid))
        while not os.path.exists(os.path.join(a.hold, "go.flag")): time.sleep(0.1)
    db, bb = ticks(d.pid), ticks(buspid); w = time.time()
    for i in range(a.pages):
        it.ListChildren(dbus.UInt32((i * 37 % pages) * 100), dbus.UInt32(100), filt)
    w = time.time() - w
    hz = os.sysconf("SC_CLK_TCK")
    dc = (ticks(d.pid) - db) / hz; bc = (ticks(buspid) - bb) / hz
    print(f"pages {a.pages} wall {w*1000/a.pages:.3f} ms/page daemon {dc*1000/a.pages:.3f} ms/page bus {bc*1000/a.pages:.3f} ms/page ratio {dc/bc if bc else 0:.2f}", flush=True)
finally:
    d.terminate(); d.wait(); bus.terminate(); bus.wait(); shutil.rmtree(tmp, ignore_errors=True)
