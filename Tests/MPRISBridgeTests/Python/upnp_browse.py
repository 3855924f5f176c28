"""A UPnP ContentDirectory client for the tests: finds a MediaServer and browses or searches it.

Usage: upnp_browse.py [--port PORT | --location URL] [--timeout SECONDS] COMMAND
  discover                       the description URL of every MediaServer that answers an SSDP
                                 M-SEARCH on 127.0.0.1 (one per line); with --port, only the one
                                 on that port
  browse [ID]                    BrowseDirectChildren from ID (default 0), then into every
                                 container it lists, depth first
  metadata ID                    BrowseMetadata of ID
  search ID CRITERIA             Search below ID, e.g. 'dc:title contains "x"'
  fetch URL FILE                 GET a resource URL into FILE; prints `STATUS LENGTH`

--location is the device description URL; --port finds it with an SSDP M-SEARCH (MX 1, so up to
a second). --timeout (default 5 s) bounds every request: Rygel never answers some requests at all
(a malformed ObjectID).

Each object is one line of tab-separated fields, in the order the server sent them:
  DEPTH KIND ID PARENT_ID CLASS TITLE CHILD_COUNT RES…
DEPTH is 0 for the children of the browsed ID (and for every search or metadata result), KIND
`container` or `item`, CHILD_COUNT the container's childCount (`-` for items or when absent),
each RES `protocolInfo|URL`. Tabs and newlines inside values print as spaces.

Exit status: 0; 1 for a SOAP fault (`FAULT code description` on stderr); 2 for no answer in
time or no server found; 3 for an unreadable answer.
"""

import argparse
import socket
import sys
import time
import urllib.error
import urllib.parse
import urllib.request
import xml.etree.ElementTree as ElementTree

SSDP_GROUP = ("239.255.255.250", 1900)
MEDIA_SERVER = "urn:schemas-upnp-org:device:MediaServer:1"
CONTENT_DIRECTORY_PREFIX = "urn:schemas-upnp-org:service:ContentDirectory:"
DEVICE = "{urn:schemas-upnp-org:device-1-0}"
SOAP = "http://schemas.xmlsoap.org/soap/envelope/"
DIDL = "{urn:schemas-upnp-org:metadata-1-0/DIDL-Lite/}"
DC = "{http://purl.org/dc/elements/1.1/}"
UPNP = "{urn:schemas-upnp-org:metadata-1-0/upnp/}"
CONTROL = "{urn:schemas-upnp-org:control-1-0}"
PAGE = 100


class Failure(Exception):
    def __init__(self, status, message):
        super().__init__(message)
        self.status = status


def discover(timeout, port=None):
    """Description URLs of the MediaServers answering an M-SEARCH on loopback, in answer order.

    Servers answer after a random delay of up to MX (1) seconds; the search is sent again each
    round that brings no answer, until `timeout`. With `port`, the first answer from it ends it."""
    probe = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    try:
        probe.setsockopt(socket.IPPROTO_IP, socket.IP_MULTICAST_IF, socket.inet_aton("127.0.0.1"))
        probe.setsockopt(socket.IPPROTO_IP, socket.IP_MULTICAST_TTL, 1)
        probe.bind(("127.0.0.1", 0))
        request = ("M-SEARCH * HTTP/1.1\r\nHOST: 239.255.255.250:1900\r\nMAN: \"ssdp:discover\"\r\n"
                   "MX: 1\r\nST: " + MEDIA_SERVER + "\r\n\r\n").encode()
        deadline = time.monotonic() + timeout
        locations = []
        while not locations and time.monotonic() < deadline:
            probe.sendto(request, SSDP_GROUP)
            round_end = min(deadline, time.monotonic() + 1.2)
            while (remaining := round_end - time.monotonic()) > 0:
                probe.settimeout(remaining)
                try:
                    answer, _ = probe.recvfrom(65536)
                except socket.timeout:
                    break
                for line in answer.decode("utf-8", "replace").split("\r\n"):
                    name, _, value = line.partition(":")
                    if name.strip().lower() == "location":
                        location = value.strip()
                        if location not in locations and (
                                port is None or urllib.parse.urlsplit(location).port == port):
                            locations.append(location)
                if port is not None and locations:
                    return locations
        return locations
    finally:
        probe.close()


def fetch(url, timeout, data=None, headers=None):
    request = urllib.request.Request(url, data=data, headers=headers or {})
    try:
        with urllib.request.urlopen(request, timeout=timeout) as answer:
            return answer.read()
    except urllib.error.HTTPError as error:
        return error.read()  # a SOAP fault comes with status 500
    except (socket.timeout, TimeoutError) as error:
        raise Failure(2, f"no answer from {url} within {timeout} s") from error
    except urllib.error.URLError as error:
        if isinstance(error.reason, (socket.timeout, TimeoutError)):
            raise Failure(2, f"no answer from {url} within {timeout} s") from error
        raise Failure(2, f"cannot reach {url}: {error.reason}") from error


def download(url, path, timeout):
    """(HTTP status, bytes written) of a GET of url into path."""
    try:
        with urllib.request.urlopen(url, timeout=timeout) as answer, open(path, "wb") as file:
            data = answer.read()
            file.write(data)
            return answer.status, len(data)
    except urllib.error.HTTPError as error:
        return error.code, 0
    except (socket.timeout, TimeoutError) as error:
        raise Failure(2, f"no answer from {url} within {timeout} s") from error
    except urllib.error.URLError as error:
        raise Failure(2, f"cannot fetch {url}: {error.reason}") from error


def parse(data, what):
    try:
        return ElementTree.fromstring(data)
    except ElementTree.ParseError as error:
        raise Failure(3, f"unreadable {what}: {error}: {data[:300]!r}") from error


def content_directory(location, timeout):
    """(controlURL, serviceType) of the first ContentDirectory in the device description."""
    description = parse(fetch(location, timeout), "device description")
    for service in description.iter(DEVICE + "service"):
        service_type = service.findtext(DEVICE + "serviceType", "")
        if service_type.startswith(CONTENT_DIRECTORY_PREFIX):
            control = service.findtext(DEVICE + "controlURL", "")
            return urllib.parse.urljoin(location, control), service_type
    raise Failure(3, f"no ContentDirectory in {location}")


def escape(text):
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace('"', "&quot;")


def soap(control, service_type, action, arguments, timeout):
    """Calls `action` and returns its out-arguments as a dict of strings."""
    body = "".join(f"<{name}>{escape(str(value))}</{name}>" for name, value in arguments)
    envelope = (f'<?xml version="1.0" encoding="utf-8"?><s:Envelope xmlns:s="{SOAP}" '
                f's:encodingStyle="http://schemas.xmlsoap.org/soap/encoding/"><s:Body>'
                f'<u:{action} xmlns:u="{service_type}">{body}</u:{action}></s:Body></s:Envelope>')
    headers = {"Content-Type": 'text/xml; charset="utf-8"', "SOAPACTION": f'"{service_type}#{action}"'}
    answer = parse(fetch(control, timeout, envelope.encode(), headers), action + " answer")
    fault = answer.find(f"{{{SOAP}}}Body/{{{SOAP}}}Fault")
    if fault is not None:
        code = next((element.text for element in fault.iter(CONTROL + "errorCode")), "?")
        text = next((element.text for element in fault.iter(CONTROL + "errorDescription")), "")
        raise Failure(1, f"FAULT {code} {text}")
    response = answer.find(f"{{{SOAP}}}Body/*")
    if response is None:
        raise Failure(3, f"empty {action} answer")
    return {child.tag.rpartition("}")[2]: child.text or "" for child in response}


def paged(control, service_type, action, first_arguments, timeout):
    """Every DIDL object an action returns, asking for PAGE objects at a time."""
    objects = []
    while True:
        arguments = first_arguments + [("Filter", "*"), ("StartingIndex", len(objects)),
                                       ("RequestedCount", PAGE), ("SortCriteria", "")]
        out = soap(control, service_type, action, arguments, timeout)
        page = list(parse(out.get("Result", "").encode(), "DIDL-Lite"))
        objects += page
        # TotalMatches 0 means unknown (Rygel's Search with a RequestedCount): go on while pages are full.
        total = int(out.get("TotalMatches", "0") or 0)
        if not page or (len(objects) >= total if total else len(page) < PAGE):
            return objects


def field(text):
    return " ".join((text or "").split("\t")).replace("\n", " ").replace("\r", " ")


def line(depth, element):
    kind = element.tag.rpartition("}")[2]
    resources = [f"{res.get('protocolInfo', '')}|{(res.text or '').strip()}" for res in element.findall(DIDL + "res")]
    fields = [str(depth), kind, element.get("id", ""), element.get("parentID", ""),
              element.findtext(UPNP + "class", ""), element.findtext(DC + "title", ""),
              element.get("childCount", "-") if kind == "container" else "-"] + resources
    return "\t".join(field(value) for value in fields)


def browse(control, service_type, object_id, depth, timeout):
    arguments = [("ObjectID", object_id), ("BrowseFlag", "BrowseDirectChildren")]
    for element in paged(control, service_type, "Browse", arguments, timeout):
        print(line(depth, element), flush=True)
        if element.tag == DIDL + "container":
            browse(control, service_type, element.get("id", ""), depth + 1, timeout)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    where = parser.add_mutually_exclusive_group()
    where.add_argument("--port", type=int)
    where.add_argument("--location")
    parser.add_argument("--timeout", type=float, default=5.0)
    parser.add_argument("command", choices=["discover", "browse", "metadata", "search", "fetch"])
    parser.add_argument("arguments", nargs="*")
    options = parser.parse_args()
    try:
        if options.command == "discover":
            locations = discover(options.timeout, options.port)
            if not locations:
                where = "loopback" if options.port is None else f"port {options.port}"
                raise Failure(2, f"no MediaServer answered on {where} within {options.timeout} s")
            print("\n".join(locations))
            return 0
        if options.command == "fetch":
            if len(options.arguments) != 2:
                parser.error("fetch takes a URL and a FILE")
            status, length = download(options.arguments[0], options.arguments[1], options.timeout)
            print(status, length)
            return 0
        location = options.location
        if location is None:
            if options.port is None:
                parser.error("--port or --location is required")
            found = discover(options.timeout, options.port)
            if not found:
                raise Failure(2, f"no MediaServer answered on port {options.port}")
            location = found[0]
        control, service_type = content_directory(location, options.timeout)
        if options.command == "browse":
            if len(options.arguments) > 1:
                parser.error("browse takes at most one ID")
            browse(control, service_type, (options.arguments or ["0"])[0], 0, options.timeout)
        elif options.command == "metadata":
            if len(options.arguments) != 1:
                parser.error("metadata takes one ID")
            arguments = [("ObjectID", options.arguments[0]), ("BrowseFlag", "BrowseMetadata")]
            for element in paged(control, service_type, "Browse", arguments, options.timeout):
                print(line(0, element))
        else:
            if len(options.arguments) != 2:
                parser.error("search takes an ID and a criteria")
            arguments = [("ContainerID", options.arguments[0]), ("SearchCriteria", options.arguments[1])]
            for element in paged(control, service_type, "Search", arguments, options.timeout):
                print(line(0, element))
        return 0
    except Failure as failure:
        print(failure, file=sys.stderr)
        return failure.status


if __name__ == "__main__":
    sys.exit(main())
