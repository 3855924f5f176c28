"""Queues tracks on an MPD server (mpd 0.23, or Mopidy's MPD frontend) for PeerBenchmark.

Usage: /usr/bin/python3 Benchmarks/Python/mpd_queue.py ADDRESS [--update] [URI...]
ADDRESS is a Unix socket path or HOST:PORT. Connects (retrying for up to 60 s while the server
starts), with --update rebuilds the database and waits until it is done, clears the queue and
adds each URI in order, or the whole database without any. Prints "queued N" and exits 0;
exits 1 with the reason on stderr.
"""
import sys
import time

import mpd


def connect(address, deadline):
    while True:
        client = mpd.MPDClient()
        client.timeout = 30
        try:
            if address.startswith("/"):
                client.connect(address)
            else:
                host, port = address.rsplit(":", 1)
                client.connect(host, int(port))
            return client
        except (OSError, mpd.ConnectionError):
            if time.monotonic() > deadline:
                raise
            time.sleep(0.02)


def main():
    arguments = sys.argv[1:]
    if not arguments:
        print(__doc__, file=sys.stderr)
        return 64
    address = arguments.pop(0)
    update = "--update" in arguments
    uris = [argument for argument in arguments if argument != "--update"]
    deadline = time.monotonic() + 60
    client = connect(address, deadline)
    if update:
        client.update()
        while "updating_db" in client.status():
            if time.monotonic() > deadline:
                raise RuntimeError("the database update did not end within 60 s")
            time.sleep(0.02)
    client.clear()
    if uris:
        for uri in uris:
            client.add(uri)
    else:
        client.add("")
    count = int(client.status()["playlistlength"])
    client.close()
    print("queued %d" % count)
    return 0 if count > 0 else 1


if __name__ == "__main__":
    sys.exit(main())
