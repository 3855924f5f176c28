"""Serves the audio files of one folder over HTTP on 127.0.0.1, for the engine's tests.

Usage: media_server.py FOLDER. Prints "PORT <number>" once listening, then serves until killed.

  /file/NAME  the file, with Content-Length and byte ranges (seekable)
  /drop/NAME  announces the whole file (an MP3's ID3v2 tag removed), sends 90 % of it, waits a
              second (it plays), then closes the connection; a retry (a request with a Range
              header) is closed without an answer
  /stall/NAME        accepts the request, then sends nothing (for a minute, then closes)
  /stall-after/NAME  answers with the whole file's length, sends its first 10 KB, then nothing
                     (for a minute, then closes)
  /icy/NAME   a Shoutcast-style radio stream of the file (no length, not seekable, an MP3's
              ID3v2 tag removed) when the client asks for metadata: station "Test Radio", genre "Jazz", StreamTitle
              "First" for the first half and "Second" for the rest
"""

import http.server
import os
import re
import sys
import time

TYPES = {".ogg": "audio/ogg", ".opus": "audio/ogg", ".mp3": "audio/mpeg", ".flac": "audio/flac", ".wav": "audio/x-wav"}
META_INTERVAL = 2048
DROP_DELAY = 1.0
STALL = 60.0


def without_id3(data):
    """The bare MP3 frames a radio sends: no ID3v2 tag (10-byte header with a syncsafe size),
    which GStreamer's tag demuxer would otherwise read whole before playing anything."""
    if data[:3] == b"ID3" and len(data) > 10:
        size = (data[6] << 21) | (data[7] << 14) | (data[8] << 7) | data[9]
        data = data[10 + size + (10 if data[5] & 0x10 else 0) :]
    return data


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.0"

    def log_message(self, *args):
        pass

    def do_GET(self):
        mode, _, name = self.path.lstrip("/").partition("/")
        path = os.path.join(sys.argv[1], os.path.basename(name))
        if not os.path.isfile(path):
            self.send_error(404)
            return
        with open(path, "rb") as file:
            data = file.read()
        kind = TYPES.get(os.path.splitext(path)[1], "application/octet-stream")
        if mode == "file":
            self.send_file(data, kind)
        elif mode == "drop":
            if self.headers.get("Range"):
                return  # closes without an answer
            data = without_id3(data)
            self.send_response(200)
            self.send_header("Content-Type", kind)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data[: len(data) * 9 // 10])
            self.wfile.flush()
            time.sleep(DROP_DELAY)
        elif mode == "stall":
            time.sleep(STALL)
        elif mode == "stall-after":
            data = without_id3(data)
            self.send_response(200)
            self.send_header("Content-Type", kind)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data[:10 * 1024])
            self.wfile.flush()
            time.sleep(STALL)
        elif mode == "icy" and self.headers.get("Icy-MetaData") == "1":
            self.send_icy(data, kind)
        else:
            self.send_error(400)

    def send_file(self, data, kind):
        start = 0
        match = re.fullmatch(r"bytes=(\d+)-", self.headers.get("Range", ""))
        if match and int(match.group(1)) < len(data):
            start = int(match.group(1))
            self.send_response(206)
            self.send_header("Content-Range", "bytes %d-%d/%d" % (start, len(data) - 1, len(data)))
        else:
            self.send_response(200)
        self.send_header("Content-Type", kind)
        self.send_header("Accept-Ranges", "bytes")
        self.send_header("Content-Length", str(len(data) - start))
        self.end_headers()
        self.wfile.write(data[start:])

    def send_icy(self, data, kind):
        data = without_id3(data)
        self.send_response(200)
        self.send_header("Content-Type", kind)
        self.send_header("icy-name", "Test Radio")
        self.send_header("icy-genre", "Jazz")
        self.send_header("icy-metaint", str(META_INTERVAL))
        self.end_headers()
        sent_title = None
        for offset in range(0, len(data), META_INTERVAL):
            chunk = data[offset : offset + META_INTERVAL]
            self.wfile.write(chunk)
            if len(chunk) < META_INTERVAL:
                break
            title = "First" if offset < len(data) // 2 else "Second"
            if title == sent_title:
                self.wfile.write(b"\0")
            else:
                text = ("StreamTitle='%s';" % title).encode()
                blocks = (len(text) + 15) // 16
                self.wfile.write(bytes([blocks]) + text.ljust(blocks * 16, b"\0"))
                sent_title = title


http.server.ThreadingHTTPServer.daemon_threads = True
server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
print("PORT", server.server_address[1], flush=True)
server.serve_forever()
