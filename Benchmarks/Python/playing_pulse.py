"""What playing to PulseAudio costs: mpris-bridge beside mpd 0.23, each playing the same generated
track to a private PulseAudio (one null sink), one after the other, ROUNDS times in turn.

For each player, over WINDOW seconds once playback has settled: the player's CPU (utime + stime of
every thread, from /proc/PID/task/*/schedstat, nanoseconds), its context switches per second
(voluntary + involuntary, /proc/PID/task/*/status) by thread name, and the sound server's CPU
over the same window, beside the server's CPU with nothing playing (its null sink renders
silence on its own timer). The server's writes from the player are counted too: the stream's
requests, as `pactl list sink-inputs` cannot tell, are left to `--strace`.

Usage: /usr/bin/python3 Benchmarks/Python/playing_pulse.py [--daemon PATH] [--format ogg|mp3|flac]
       [--seconds S] [--window W] [--rounds N] [--only daemon|mpd] [--daemon-args ...] [--json PATH]
Needs pulseaudio, pactl, dbus-daemon, playerctl, mpd, mpc and gst-launch-1.0. Every process it
starts is stopped by its pid; its temporary folder is removed.
"""
import argparse
import json
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CLOCK_TICKS = os.sysconf("SC_CLK_TCK")
ENCODERS = {
    "ogg": "vorbisenc ! oggmux",
    "mp3": "lamemp3enc ! id3v2mux",
    "flac": "flacenc",
    "opus": "audioresample ! opusenc ! oggmux",
}


def read(path):
    try:
        with open(path) as handle:
            return handle.read()
    except OSError:
        return None


def sample(pid):
    """Per thread: (name, cpu ns, voluntary, involuntary), keyed by tid."""
    threads = {}
    for tid in os.listdir("/proc/%d/task" % pid) if os.path.isdir("/proc/%d/task" % pid) else []:
        base = "/proc/%d/task/%s" % (pid, tid)
        status, schedstat, comm = read(base + "/status"), read(base + "/schedstat"), read(base + "/comm")
        if status is None or schedstat is None:
            continue
        voluntary = involuntary = 0
        for line in status.splitlines():
            if line.startswith("voluntary_ctxt_switches:"):
                voluntary = int(line.split()[1])
            elif line.startswith("nonvoluntary_ctxt_switches:"):
                involuntary = int(line.split()[1])
        threads[tid] = ((comm or "?").strip(), int(schedstat.split()[0]), voluntary, involuntary)
    return threads, process_ticks(pid), time.monotonic()


def process_ticks(pid):
    text = read("/proc/%d/stat" % pid) or ""
    fields = text[text.rfind(")") + 2:].split()
    return int(fields[11]) + int(fields[12]) if len(fields) > 12 else 0


def window(pid, seconds):
    before = sample(pid)
    time.sleep(seconds)
    after = sample(pid)
    return difference(before, after)


def difference(before, after):
    elapsed = after[2] - before[2]
    by_name = {}
    total_cpu = total_switches = total_involuntary = 0
    for tid, (name, cpu, voluntary, involuntary) in after[0].items():
        old = before[0].get(tid, (name, 0, 0, 0))
        cpu_added = cpu - old[1]
        switches = (voluntary - old[2]) + (involuntary - old[3])
        if cpu_added == 0 and switches == 0:
            continue
        # Threads of one name (Swift's pool, GStreamer's task pool) are summed, with a count.
        entry = by_name.setdefault(name, [0, 0, 0])
        entry[0] += cpu_added
        entry[1] += switches
        entry[2] += 1
        total_cpu += cpu_added
        total_switches += switches
        total_involuntary += involuntary - old[3]
    return {
        "seconds": elapsed,
        "cpuPercent": total_cpu / 1e9 / elapsed * 100,
        "ticksPercent": (after[1] - before[1]) / CLOCK_TICKS / elapsed * 100,
        "switchesPerSecond": total_switches / elapsed,
        "involuntaryPerSecond": total_involuntary / elapsed,
        "threads": {name: {"cpuPercent": cpu / 1e9 / elapsed * 100, "switchesPerSecond": switches / elapsed,
                           "count": count}
                    for name, (cpu, switches, count) in by_name.items()},
    }


def both(player_pid, server_pid, seconds):
    """The player's and the server's windows, taken over the same interval."""
    player_before, server_before = sample(player_pid), sample(server_pid)
    time.sleep(seconds)
    player_after, server_after = sample(player_pid), sample(server_pid)
    return difference(player_before, player_after), difference(server_before, server_after)


def wait_for(predicate, timeout, what):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return
        time.sleep(0.05)
    raise RuntimeError("timed out waiting for " + what)


class Session:
    def __init__(self, options):
        self.options = options
        self.work = tempfile.mkdtemp(prefix="playing-pulse-")
        self.processes = []

    def spawn(self, arguments, **keywords):
        process = subprocess.Popen(arguments, **keywords)
        self.processes.append(process)
        return process

    def stop(self, process):
        if process.poll() is None:
            process.send_signal(signal.SIGTERM)
            try:
                process.wait(10)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
        if process in self.processes:
            self.processes.remove(process)

    def close(self):
        for process in reversed(list(self.processes)):
            self.stop(process)
        shutil.rmtree(self.work, ignore_errors=True)

    # The library: a few long tracks of one format, 44.1 kHz stereo, as ripped CDs are.
    def make_library(self):
        music = self.work + "/music"
        os.makedirs(music + "/Artist/Album")
        seconds = self.options.seconds
        for track, frequency in enumerate([440, 330, 550], start=1):
            path = "%s/Artist/Album/%02d Tone %d.%s" % (music, track, track, self.options.format)
            tags = ('tags="title=(string)\\"Tone %d\\",artist=(string)Artist,album=(string)Album,'
                    'track-number=(uint)%d"' % (track, track))
            pipeline = (["gst-launch-1.0", "-q", "audiotestsrc", "num-buffers=%d" % (seconds * 10),
                         "samplesperbuffer=4410", "freq=%d" % frequency, "volume=0.3", "!",
                         "audio/x-raw,rate=44100,channels=2", "!", "audioconvert", "!", "taginject", tags, "!"]
                        + ENCODERS[self.options.format].split() + ["!", "filesink", "location=" + path])
            subprocess.run(pipeline, check=True)
        return music

    def start_sound_server(self):
        base = self.work + "/pulse"
        for folder in ("/run", "/home"):
            os.makedirs(base + folder, mode=0o700)
        with open(base + "/server.pa", "w") as script:
            script.write(".fail\nload-module module-null-sink sink_name=speakers rate=48000\n"
                         "set-default-sink speakers\nload-module module-native-protocol-unix auth-anonymous=1\n")
        with open(base + "/client.conf", "w") as conf:
            conf.write("autospawn = no\n")
        environment = dict(os.environ, XDG_RUNTIME_DIR=base + "/run", HOME=base + "/home",
                           DBUS_SESSION_BUS_ADDRESS="unix:path=/nonexistent")
        for key in ("PULSE_SERVER", "PULSE_SINK", "PULSE_SOURCE", "PULSE_PROP", "PULSE_COOKIE"):
            environment.pop(key, None)
        log = open(base + "/server.log", "w")
        server = self.spawn(["pulseaudio", "-n", "--daemonize=no", "--exit-idle-time=-1", "--use-pid-file=no",
                             "--realtime=no", "--high-priority=no", "--log-target=stderr", "--log-level=info",
                             "-F", base + "/server.pa"], env=environment, stdout=log, stderr=log)
        wait_for(lambda: "Daemon startup complete." in (read(base + "/server.log") or ""), 10, "pulseaudio")
        self.client_environment = {"PULSE_SERVER": "unix:" + base + "/run/pulse/native",
                                   "PULSE_CLIENTCONFIG": base + "/client.conf", "XDG_RUNTIME_DIR": base + "/run"}
        return server

    def start_bus(self):
        bus = self.spawn(["dbus-daemon", "--session", "--nofork", "--nopidfile", "--print-address=1"],
                         stdout=subprocess.PIPE, text=True)
        return bus, bus.stdout.readline().strip()

    def sink_inputs(self):
        environment = dict(os.environ, **self.client_environment)
        return subprocess.run(["pactl", "list", "short", "sink-inputs"], env=environment, capture_output=True,
                              text=True).stdout.strip()

    def start_daemon(self, music, bus_address):
        state = self.work + "/daemon"
        os.makedirs(state, exist_ok=True)
        subprocess.run([self.options.daemon, "scan", "--library", music, "--cache-dir", state + "/cache", "--quiet"],
                       check=True)
        environment = dict(os.environ, DBUS_SESSION_BUS_ADDRESS=bus_address, **self.client_environment)
        log = open(state + "/daemon.log", "w")
        daemon = self.spawn([self.options.daemon, "--library", music, "--cache-dir", state + "/cache", "--state-dir",
                             state + "/state", "--audio-sink", self.options.audio_sink, "--name", "playing",
                             "--mpd-port", "0", "--mpd-socket", state + "/mpd.socket", "--no-scan"]
                            + self.options.daemon_args, env=environment, stdout=log, stderr=log)
        wait_for(lambda: "ready:" in (read(state + "/daemon.log") or ""), 30, "the daemon's ready:")
        playerctl = ["playerctl", "-p", "playing"]
        subprocess.run(playerctl + ["play"], env=environment, check=True)
        wait_for(lambda: subprocess.run(playerctl + ["status"], env=environment, capture_output=True,
                                        text=True).stdout.strip() == "Playing", 10, "Playing")
        wait_for(lambda: self.sink_inputs() != "", 10, "the daemon's stream")
        return daemon

    def start_mpd(self, music):
        home = self.work + "/mpd"
        os.makedirs(home, exist_ok=True)
        socket = home + "/socket"
        with open(home + "/mpd.conf", "w") as conf:
            conf.write('music_directory "%s"\ndb_file "%s/database"\nbind_to_address "%s"\n'
                       'auto_update "no"\nzeroconf_enabled "no"\n'
                       'audio_output {\n    type "pulse"\n    name "pulse"\n}\n' % (music, home, socket))
        environment = dict(os.environ, **self.client_environment)
        log = open(home + "/mpd.log", "w")
        mpd = self.spawn(["mpd", "--no-daemon", "--stderr", home + "/mpd.conf"], env=environment, stdout=log,
                         stderr=log)
        mpc = ["mpc", "-q", "--host", socket]
        wait_for(lambda: os.path.exists(socket) and subprocess.run(mpc + ["status"], capture_output=True).returncode == 0,
                 10, "mpd's socket")
        subprocess.run(mpc + ["update", "--wait"], check=True)
        subprocess.run(mpc + ["add", "/"], check=True)
        subprocess.run(mpc + ["play"], check=True)
        wait_for(lambda: self.sink_inputs() != "", 10, "mpd's stream")
        return mpd


class Meter:
    """GStreamer's level on the null sink's monitor, read on a thread: (arrival, loudest channel's
    RMS in dB) every 5 ms."""

    def __init__(self, environment):
        import threading
        import gi
        gi.require_version("Gst", "1.0")
        from gi.repository import Gst
        os.environ.update(environment)
        Gst.init(None)
        self.Gst = Gst
        self.pipeline = Gst.parse_launch("pulsesrc device=speakers.monitor ! level interval=5000000 ! fakesink")
        self.readings = []
        self.lock = threading.Lock()
        self.running = True
        self.pipeline.set_state(Gst.State.PLAYING)
        self.thread = threading.Thread(target=self.read, daemon=True)
        self.thread.start()

    def read(self):
        bus = self.pipeline.get_bus()
        while self.running:
            message = bus.timed_pop_filtered(100 * self.Gst.MSECOND, self.Gst.MessageType.ELEMENT)
            if message is None or message.get_structure().get_name() != "level":
                continue
            loudest = max(message.get_structure().get_value("rms"))
            with self.lock:
                self.readings.append((time.monotonic(), loudest))

    def wait(self, predicate, after, timeout=10):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            with self.lock:
                for at, rms in self.readings:
                    if at > after and predicate(rms):
                        return at
            time.sleep(0.002)
        raise RuntimeError("the monitor never met the condition")

    def stop(self):
        self.running = False
        self.thread.join()
        self.pipeline.set_state(self.Gst.State.NULL)


def pauses_to_silence(session, kind, count):
    """Pause (playerctl or mpc) -> the first silent reading on the monitor, COUNT times."""
    environment = dict(os.environ, **session.client_environment)
    if kind == "daemon":
        environment["DBUS_SESSION_BUS_ADDRESS"] = session.bus_address
        pause, play = ["playerctl", "-p", "playing", "pause"], ["playerctl", "-p", "playing", "play"]
    else:
        mpc = ["mpc", "-q", "--host", session.work + "/mpd/socket"]
        pause, play = mpc + ["pause"], mpc + ["play"]
    meter = Meter(session.client_environment)
    times = []
    try:
        for _ in range(count):
            meter.wait(lambda rms: rms > -40, time.monotonic())
            started = time.monotonic()
            subprocess.run(pause, env=environment, check=True)
            times.append((meter.wait(lambda rms: rms < -70, started) - started) * 1000)
            subprocess.run(play, env=environment, check=True)
    finally:
        meter.stop()
    return times


def volumes_to_quiet(session, kind, count):
    """Volume from 100 % to 10 % (playerctl or mpc) -> the first reading 15 dB quieter, COUNT times."""
    environment = dict(os.environ, **session.client_environment)
    if kind == "daemon":
        environment["DBUS_SESSION_BUS_ADDRESS"] = session.bus_address
        quiet, loud = ["playerctl", "-p", "playing", "volume", "0.1"], ["playerctl", "-p", "playing", "volume", "1.0"]
    else:
        mpc = ["mpc", "-q", "--host", session.work + "/mpd/socket"]
        quiet, loud = mpc + ["volume", "10"], mpc + ["volume", "100"]
    subprocess.run(loud, env=environment, check=True)
    meter = Meter(session.client_environment)
    times = []
    try:
        for _ in range(count):
            time.sleep(1)
            level = meter.wait(lambda rms: rms > -40, time.monotonic())
            with meter.lock:
                loud_level = statistics.median(rms for _, rms in meter.readings[-10:])
            started = time.monotonic()
            subprocess.run(quiet, env=environment, check=True)
            try:
                times.append((meter.wait(lambda rms: rms < loud_level - 15, started, timeout=3) - started) * 1000)
            except RuntimeError:
                times.append(float("nan"))
            subprocess.run(loud, env=environment, check=True)
    finally:
        meter.stop()
    return times


def measure(session, music, bus_address, server, kind):
    player = session.start_daemon(music, bus_address) if kind == "daemon" else session.start_mpd(music)
    try:
        time.sleep(session.options.settle)
        if session.options.streams:
            # The stream's buffer as the server configured it, and the sink's latency (what it renders at a time).
            environment = dict(os.environ, **session.client_environment)
            for command in (["pactl", "list", "sink-inputs"], ["pactl", "list", "sinks"]):
                listing = subprocess.run(command, env=environment, capture_output=True, text=True).stdout
                print("    %s: %s" % (kind, "; ".join(line.strip() for line in listing.splitlines() if "atency" in line)))
        player_window, server_window = both(player.pid, server.pid, session.options.window)
        if player.poll() is not None:
            raise RuntimeError(kind + " exited while measured")
        if session.options.pauses:
            player_window["pauseToSilenceMs"] = pauses_to_silence(session, kind, session.options.pauses)
            print("    %s: pause -> silence on the monitor, ms: %s" % (
                kind, " ".join("%.0f" % value for value in player_window["pauseToSilenceMs"])))
        if session.options.volumes:
            player_window["volumeToQuietMs"] = volumes_to_quiet(session, kind, session.options.volumes)
            print("    %s: volume 100 %% -> 10 %% heard on the monitor, ms: %s" % (
                kind, " ".join("%.0f" % value for value in player_window["volumeToQuietMs"])))
        return player_window, server_window
    finally:
        session.stop(player)
        wait_for(lambda: session.sink_inputs() == "", 10, "the stream to go")


def median(values):
    return statistics.median(values) if values else float("nan")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--daemon", default=ROOT + "/.build/release/mpris-bridge")
    parser.add_argument("--audio-sink", default="autoaudiosink")
    parser.add_argument("--format", default="ogg", choices=sorted(ENCODERS))
    parser.add_argument("--seconds", type=int, default=60, help="length of each track")
    parser.add_argument("--window", type=float, default=10)
    parser.add_argument("--settle", type=float, default=5)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--only", choices=["daemon", "mpd"])
    parser.add_argument("--daemon-args", nargs="*", default=[])
    parser.add_argument("--json")
    parser.add_argument("--threads", action="store_true", help="print each round's threads")
    parser.add_argument("--streams", action="store_true", help="print the stream's and the sink's latencies")
    parser.add_argument("--pauses", type=int, default=0, help="after the window, time N pauses to silence")
    parser.add_argument("--volumes", type=int, default=0, help="after the window, time N volume drops")
    options = parser.parse_args()
    session = Session(options)
    results = {"idle": [], "daemon": [], "mpd": []}
    try:
        music = session.make_library()
        server = session.start_sound_server()
        _, bus_address = session.start_bus()
        session.bus_address = bus_address
        time.sleep(1)
        kinds = [options.only] if options.only else ["daemon", "mpd"]
        for round_ in range(options.rounds):
            results["idle"].append(window(server.pid, options.window / 2))
            for kind in (kinds if round_ % 2 == 0 else list(reversed(kinds))):
                player_window, server_window = measure(session, music, bus_address, server, kind)
                results[kind].append({"player": player_window, "server": server_window})
                print("round %d %-6s CPU %.2f %% (ticks %.2f %%), %.0f switches/s (%.0f involuntary); server %.2f %%"
                      % (round_ + 1, kind, player_window["cpuPercent"], player_window["ticksPercent"],
                         player_window["switchesPerSecond"], player_window["involuntaryPerSecond"],
                         server_window["cpuPercent"]), flush=True)
                if options.threads:
                    for name, entry in sorted(player_window["threads"].items(),
                                              key=lambda item: -item[1]["switchesPerSecond"]):
                        print("    %-20s x%d %7.1f switches/s %6.3f %% CPU"
                              % (name, entry["count"], entry["switchesPerSecond"], entry["cpuPercent"]))
    finally:
        session.close()

    idle = median([entry["cpuPercent"] for entry in results["idle"]])
    print("\nmedians over %d rounds of %g s (%s, %d s tracks); server idle %.2f %%"
          % (options.rounds, options.window, options.format, options.seconds, idle))
    summary = {"format": options.format, "window": options.window, "rounds": options.rounds, "serverIdlePercent": idle}
    for kind in ("daemon", "mpd"):
        runs = results[kind]
        if not runs:
            continue
        figures = {
            "cpuPercent": median([run["player"]["cpuPercent"] for run in runs]),
            "switchesPerSecond": median([run["player"]["switchesPerSecond"] for run in runs]),
            "serverPercent": median([run["server"]["cpuPercent"] for run in runs]),
        }
        figures["serverForStreamPercent"] = figures["serverPercent"] - idle
        summary[kind] = figures
        names = sorted({name for run in runs for name in run["player"]["threads"]})
        threads = {}
        for name in names:
            entries = [run["player"]["threads"].get(name, {"cpuPercent": 0, "switchesPerSecond": 0}) for run in runs]
            threads[name] = {"cpuPercent": median([e["cpuPercent"] for e in entries]),
                             "switchesPerSecond": median([e["switchesPerSecond"] for e in entries])}
        figures["threads"] = threads
        print("%-6s CPU %.2f %%, %.0f switches/s; server %.2f %% (%.2f %% over idle)"
              % (kind, figures["cpuPercent"], figures["switchesPerSecond"], figures["serverPercent"],
                 figures["serverForStreamPercent"]))
        for name, entry in sorted(threads.items(), key=lambda item: -item[1]["switchesPerSecond"]):
            print("    %-20s %7.1f switches/s %6.3f %% CPU" % (name, entry["switchesPerSecond"], entry["cpuPercent"]))
    if "daemon" in summary and "mpd" in summary:
        daemon, mpd = summary["daemon"], summary["mpd"]
        print("daemon / mpd: CPU %.2f, switches %.2f, server for the stream %.2f"
              % (daemon["cpuPercent"] / mpd["cpuPercent"], daemon["switchesPerSecond"] / mpd["switchesPerSecond"],
                 daemon["serverForStreamPercent"] / max(mpd["serverForStreamPercent"], 1e-9)))
    if options.json:
        with open(options.json, "w") as output:
            json.dump({"summary": summary, "runs": results}, output, indent=1)


if __name__ == "__main__":
    main()
