"""A Snapcast JSON-RPC client for the tests: reads a stream's state and controls it.

Usage: snapcast_control.py [--port PORT] [--timeout SECONDS] COMMAND
  status STREAM                     the stream as Server.GetStatus shows it, one line of JSON
  control STREAM COMMAND [PARAMS]   Stream.Control (next, previous, play, pause, setPosition, …)
                                    with PARAMS, a JSON object (`{"position": 5}`); prints the
                                    result as JSON
  wait STREAM [--status S] [--playback P] [--title T]
                                    waits until the stream's `status` is S, its
                                    `properties.playbackStatus` P and its metadata title T (each
                                    only if given); prints `ELAPSED_MS` and the stream as JSON

It talks newline-delimited JSON-RPC 2.0 to snapserver's TCP control port (default 1705) on
127.0.0.1. `wait` reads the stream once, then again at each notification snapserver sends
(Stream.OnProperties, Stream.OnUpdate, …) and at least every 250 ms, so it reacts to events
without trusting that each one is sent; --timeout (default 10 s) bounds every command
(a wait's last reading gets two seconds more).

Exit status: 0; 1 for a JSON-RPC error or an unknown stream (the answer on stderr); 2 when
`wait` timed out (the last state seen on stderr) or nothing answered in time.
"""

import argparse
import json
import select
import socket
import sys
import time


class Failure(Exception):
    def __init__(self, status, message):
        super().__init__(message)
        self.status = status


class Connection:
    """One control connection; answers are matched by id, notifications are counted."""

    def __init__(self, port, deadline):
        self.deadline = deadline
        try:
            self.socket = socket.create_connection(("127.0.0.1", port), timeout=self.remaining())
        except OSError as error:
            raise Failure(2, f"snapserver's control port {port} did not answer: {error}")
        self.buffer = b""
        self.next_id = 1
        self.notifications = 0

    def remaining(self):
        return max(0.0, self.deadline - time.monotonic())

    def read_message(self, until):
        """The next message, or None when `until` (monotonic) passes first."""
        while b"\n" not in self.buffer:
            left = min(until, self.deadline) - time.monotonic()
            if left <= 0:
                return None
            readable, _, _ = select.select([self.socket], [], [], left)
            if not readable:
                continue
            chunk = self.socket.recv(65536)
            if not chunk:
                raise Failure(2, "snapserver closed the control connection")
            self.buffer += chunk
        line, self.buffer = self.buffer.split(b"\n", 1)
        return json.loads(line)

    def call(self, method, params):
        request_id = self.next_id
        self.next_id += 1
        message = {"id": request_id, "jsonrpc": "2.0", "method": method, "params": params}
        self.socket.sendall(json.dumps(message).encode() + b"\n")
        while True:
            answer = self.read_message(self.deadline)
            if answer is None:
                raise Failure(2, f"no answer to {method} in time")
            if answer.get("id") == request_id:
                if "error" in answer:
                    raise Failure(1, f"{method}: {json.dumps(answer['error'])}")
                return answer["result"]
            if "method" in answer:
                self.notifications += 1

    def stream(self, name):
        streams = self.call("Server.GetStatus", {})["server"]["streams"]
        for stream in streams:
            if stream["id"] == name:
                return stream
        raise Failure(1, f"no stream {name}; streams: {[stream['id'] for stream in streams]}")

    def wait_for_event(self, seconds):
        """Returns after the next notification or after `seconds`, whichever is first."""
        until = time.monotonic() + seconds
        if self.read_message(until) is not None:
            self.notifications += 1


def summary(stream):
    """What the tests look at: the stream's status, playback status and title."""
    properties = stream.get("properties", {})
    return {
        "id": stream["id"],
        "status": stream.get("status"),
        "playbackStatus": properties.get("playbackStatus"),
        "title": properties.get("metadata", {}).get("title"),
        "properties": properties,
    }


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--port", type=int, default=1705)
    parser.add_argument("--timeout", type=float, default=10)
    commands = parser.add_subparsers(dest="command", required=True)
    status = commands.add_parser("status")
    status.add_argument("stream")
    control = commands.add_parser("control")
    control.add_argument("stream")
    control.add_argument("action")
    control.add_argument("params", nargs="?", type=json.loads)
    wait = commands.add_parser("wait")
    wait.add_argument("stream")
    wait.add_argument("--status")
    wait.add_argument("--playback")
    wait.add_argument("--title")
    arguments = parser.parse_args()

    started = time.monotonic()
    try:
        # Two seconds more for the connection, so the last reading of a wait still gets its answer.
        connection = Connection(arguments.port, started + arguments.timeout + 2)
        if arguments.command == "status":
            print(json.dumps(summary(connection.stream(arguments.stream))))
        elif arguments.command == "control":
            params = {"id": arguments.stream, "command": arguments.action}
            if arguments.params is not None:
                params["params"] = arguments.params
            result = connection.call("Stream.Control", params)
            print(json.dumps(result))
        else:
            wanted = {"status": arguments.status, "playbackStatus": arguments.playback, "title": arguments.title}
            wanted = {key: value for key, value in wanted.items() if value is not None}
            while True:
                seen = summary(connection.stream(arguments.stream))
                if all(seen[key] == value for key, value in wanted.items()):
                    print(int((time.monotonic() - started) * 1000))
                    print(json.dumps(seen))
                    return 0
                left = started + arguments.timeout - time.monotonic()
                if left <= 0:
                    raise Failure(2, f"waited {arguments.timeout} s for {wanted}; last seen: {json.dumps(seen)}")
                connection.wait_for_event(min(0.25, left))
    except Failure as failure:
        print(str(failure), file=sys.stderr)
        return failure.status
    return 0


if __name__ == "__main__":
    sys.exit(main())
