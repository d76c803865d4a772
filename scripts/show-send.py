#!/usr/bin/env python3
"""Sends show-control commands to a Lockstep wall as a show controller would, with python-osc (the
OSC library TouchOSC's and QLab's users script with) for OSC and plain sockets for UDP and TCP
strings. Prints one line per command sent: its index, CLOCK_MONOTONIC in nanoseconds at the send,
the transport and the command, so a test can time every cut from its trigger.

    show-send.py --osc 127.0.0.1:53000 osc:cue:welcome udp:pause osc:resume
    show-send.py --osc 127.0.0.1:53000 --udp 127.0.0.1:53001 --interval 1.2 osc:cue:a udp:cue:b ...
    show-send.py --osc 127.0.0.1:53000 --udp 127.0.0.1:53001 --flood 500 --source 127.0.0.2

Each command is TRANSPORT:VERB or TRANSPORT:cue:NAME, TRANSPORT osc, udp or tcp. --flood N sends N
malformed OSC packets and N nonsense strings, then N well-formed cues from --source (an address a
wall's show-control.allow may not name).
"""

import argparse
import random
import socket
import sys
import time

from pythonosc import osc_bundle_builder, osc_message_builder, udp_client


def endpoint(text):
    host, _, port = text.rpartition(":")
    return host.strip("[]"), int(port)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--osc")
    parser.add_argument("--udp")
    parser.add_argument("--tcp")
    parser.add_argument("--interval", type=float, default=0.0)
    parser.add_argument("--flood", type=int, default=0)
    parser.add_argument("--source", default="127.0.0.1")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--bundle-at", type=float, help="send OSC in a bundle time-tagged this many seconds ahead")
    parser.add_argument("commands", nargs="*")
    options = parser.parse_args()

    if options.flood:
        flood(options)
        return
    osc = udp_client.SimpleUDPClient(*endpoint(options.osc)) if options.osc else None
    udp = socket.socket(socket.AF_INET, socket.SOCK_DGRAM) if options.udp else None
    tcp = None
    if options.tcp:
        tcp = socket.create_connection(endpoint(options.tcp), timeout=5)
        replies = tcp.makefile("r")
    for index, command in enumerate(options.commands):
        if index and options.interval:
            time.sleep(options.interval)
        transport, _, verb = command.partition(":")
        words = verb.split(":")
        sent = time.clock_gettime_ns(time.CLOCK_MONOTONIC)
        if transport == "osc":
            address = "/lockstep/" + words[0]
            arguments = words[1:]
            if options.bundle_at is not None:
                builder = osc_bundle_builder.OscBundleBuilder(time.time() + options.bundle_at)
                message = osc_message_builder.OscMessageBuilder(address=address)
                for argument in arguments:
                    message.add_arg(argument)
                builder.add_content(message.build())
                osc.send(builder.build())
            else:
                osc.send_message(address, arguments)
        elif transport == "udp":
            udp.sendto(" ".join(words).encode(), endpoint(options.udp))
        elif transport == "tcp":
            tcp.sendall((" ".join(words) + "\n").encode())
            print(f"reply {index} {replies.readline().strip()}", flush=True)
        else:
            sys.exit(f"show-send: {command}: the transport is osc, udp or tcp")
        print(f"sent {index} {sent} {transport} {' '.join(words)}", flush=True)


def flood(options):
    """Malformed packets and strings, then well-formed cues from an address that may not send."""
    rng = random.Random(options.seed)
    raw = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    for _ in range(options.flood):
        size = rng.choice([0, 3, 4, 8, 17, 64, 300, 9000])
        junk = bytes(rng.getrandbits(8) for _ in range(size))
        if junk and rng.random() < 0.5:
            junk = b"/lockstep/cue\0\0\0" + junk
        raw.sendto(junk, endpoint(options.osc))
        raw.sendto(rng.choice([b"cue", b"cue ../../etc/passwd", b"launch", b"\xff\xfe", b"pause now", b"x" * 400]),
                   endpoint(options.udp))
    stranger = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    stranger.bind((options.source, 0))
    message = osc_message_builder.OscMessageBuilder(address="/lockstep/cue")
    message.add_arg("a")
    packet = message.build().dgram
    for _ in range(options.flood):
        stranger.sendto(packet, endpoint(options.osc))
        stranger.sendto(b"cue a", endpoint(options.udp))
    print(f"flooded {options.flood * 4}", flush=True)


if __name__ == "__main__":
    main()
