"""Drives the test server as Home Assistant and Snapcast do, with python-mpd2.

Usage: mpd_scenario.py HOST PORT SCENARIO (HOST may be a socket path, PORT then ignored).
Prints what the client saw, one JSON value a line, for the Swift test to compare.
"""
import json
import sys

import mpd

host, port, scenario = sys.argv[1], int(sys.argv[2]), sys.argv[3]


def client():
    c = mpd.MPDClient()
    c.timeout = 10
    c.idletimeout = 10
    c.connect(host, port)
    return c


def show(value):
    print(json.dumps(value), flush=True)


def error_of(call):
    try:
        call()
    except mpd.CommandError as error:
        return str(error)
    return None


# The test server's own commands, unknown to python-mpd2.
mpd.MPDClient.add_command("fail", mpd.MPDClient._parse_nothing)

if scenario == "commandlist":
    c = client()
    c.command_list_ok_begin()
    c.status()
    c.ping()
    c.add("a song")
    show(c.command_list_end())
    c.command_list_ok_begin()
    c.ping()
    c.fail()
    c.ping()
    show(error_of(c.command_list_end))
    show(c.ping())
elif scenario == "idle":
    # A change made while a client is not idle waits for its next idle.
    waiting, player = client(), client()
    player.play()
    show(waiting.idle("player", "mixer"))
    show(waiting.status()["state"])
elif scenario == "idle-wake":
    # Waits in idle until the test posts a change.
    show(client().idle("player"))
elif scenario == "password":
    c = client()
    show(error_of(c.status))
    show(error_of(lambda: c.password("wrong")))
    show(error_of(c.status))
    c.password("reader")
    show(c.status()["state"])
    show(error_of(lambda: c.add("a song")))
    c.password("controller")
    show(c.add("a song"))
    show(c.commands())
else:
    sys.exit("unknown scenario " + scenario)
