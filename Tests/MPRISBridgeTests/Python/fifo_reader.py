"""Reads a named pipe as Snapcast's pipe stream does, and counts each time its writers went away.

Usage: fifo_reader.py PATH

Opens PATH for reading (waiting for a writer), reads as fast as data comes and, whenever a read
finds end of file (the pipe had no writer left), counts it, prints `eof` and opens the pipe
again. The first data after each open prints `data`. On SIGUSR1 it prints
`report eof=N bytes=M`: the ends of file and the bytes read so far. Runs until killed.

Reading with blocking reads makes an end of file certain to be seen: a read waiting on an empty
pipe returns 0 the moment its last writer closes it.
"""

import os
import signal
import sys

path = sys.argv[1]
ends = 0
total = 0


def report(signum, frame):
    print(f"report eof={ends} bytes={total}", flush=True)


signal.signal(signal.SIGUSR1, report)
print("started", flush=True)
while True:
    descriptor = os.open(path, os.O_RDONLY)
    first = True
    while True:
        chunk = os.read(descriptor, 65536)
        if not chunk:
            break
        total += len(chunk)
        if first:
            first = False
            print("data", flush=True)
    os.close(descriptor)
    ends += 1
    print("eof", flush=True)
