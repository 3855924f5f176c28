"""Round trips from a python3-dbus client, for MPRISBenchmark (run by it with /usr/bin/python3
against its private bus, DBUS_SESSION_BUS_ADDRESS set):

  busFloorGetId  org.freedesktop.DBus.GetId, answered by the bus daemon: the floor
  servicePing    org.freedesktop.DBus.Peer.Ping to the player, answered by libdbus in it
  getAllPlayer   Properties.GetAll("org.mpris.MediaPlayer2.Player"), unmarshalled into dbus-python values

each ITERATIONS times after WARM_UP of each, interleaved in batches of BATCH with the order
rotating every round, as the Swift client does. Prints one JSON object on stdout: for each kind
iterations, p50, p90, p99, mean, min and max in microseconds (nearest-rank percentiles).
Usage: mpris_roundtrips.py BUS_NAME ITERATIONS WARM_UP BATCH"""
import json
import math
import platform
import sys
import time

import dbus


def summary(samples):
    ordered = sorted(samples)

    def percentile(fraction):
        rank = math.ceil(fraction * len(ordered))  # nearest rank, as the Swift side's Summary
        return ordered[min(max(rank, 1), len(ordered)) - 1] / 1000

    return {"iterations": len(ordered), "p50": percentile(0.50), "p90": percentile(0.90),
            "p99": percentile(0.99), "mean": sum(ordered) / len(ordered) / 1000, "min": ordered[0] / 1000,
            "max": ordered[-1] / 1000}


def main():
    name, iterations, warm_up, batch = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
    bus = dbus.SessionBus()
    daemon = bus.get_object("org.freedesktop.DBus", "/org/freedesktop/DBus", introspect=False)
    player = bus.get_object(name, "/org/mpris/MediaPlayer2", introspect=False)
    get_id = daemon.get_dbus_method("GetId", "org.freedesktop.DBus")
    ping = player.get_dbus_method("Ping", "org.freedesktop.DBus.Peer")
    get_all = player.get_dbus_method("GetAll", "org.freedesktop.DBus.Properties")
    kinds = [("busFloorGetId", get_id), ("servicePing", ping),
             ("getAllPlayer", lambda: get_all("org.mpris.MediaPlayer2.Player"))]

    properties = get_all("org.mpris.MediaPlayer2.Player")
    if "PlaybackStatus" not in properties or "xesam:title" not in properties.get("Metadata", {}):
        sys.exit("GetAll(Player) returned no PlaybackStatus or no Metadata title: %r" % (properties,))

    for _ in range(warm_up):
        for _, call in kinds:
            call()
    samples = [[] for _ in kinds]
    clock = time.perf_counter_ns
    round_ = 0
    while len(samples[0]) < iterations:
        count = min(batch, iterations - len(samples[0]))
        for offset in range(len(kinds)):
            index = (offset + round_) % len(kinds)
            call, times = kinds[index][1], samples[index]
            for _ in range(count):
                start = clock()
                call()
                times.append(clock() - start)
        round_ += 1

    print(json.dumps({
        "python": platform.python_version(),
        "dbusPython": dbus.__version__,
        "properties": len(properties),
        "metadataEntries": len(properties["Metadata"]),
        "roundTrips": {key: summary(times) for (key, _), times in zip(kinds, samples)},
    }))


if __name__ == "__main__":
    main()
