#!/usr/bin/python3
"""Stock GStreamer net clock, for interoperability tests and the clock benchmark.

  provider  run a GstNetTimeProvider serving the system clock (CLOCK_MONOTONIC);
            prints {"event": "ready", "port": P} once listening
  client    run a GstNetClientClock against a server; prints one JSON line per sample:
            {"monoNs", "clockNs", "elapsedNs", "synced"}: the clock's time and CLOCK_MONOTONIC
            read together (the middle of a monotonic read before and after), so the caller can
            compare the clock with the true master time

Both stop after --duration seconds, on SIGINT/SIGTERM, or when stdin is a pipe and closes (so a
parent that dies takes them along). Needs python3-gi and gir1.2-gstreamer-1.0: run with /usr/bin/python3.
"""
import argparse
import json
import os
import signal
import stat
import sys
import threading
import time

import gi

gi.require_version("Gst", "1.0")
gi.require_version("GstNet", "1.0")
from gi.repository import Gst, GstNet  # noqa: E402


def emit(record):
    print(json.dumps(record, separators=(",", ":")), flush=True)


class Stop:
    """Set on SIGINT/SIGTERM, when stdin (a pipe) closes, or after `duration` seconds.

    A plain flag polled by the main loop: a signal handler must not touch a lock the interrupted
    main thread may hold (threading.Event.set() there can deadlock against Event.wait()).
    """

    def __init__(self, duration):
        self.requested = False
        self.deadline = None if duration is None else time.monotonic() + duration
        for number in (signal.SIGINT, signal.SIGTERM):
            signal.signal(number, self._request)
        if stat.S_ISFIFO(os.fstat(sys.stdin.fileno()).st_mode):
            threading.Thread(target=self._watch_stdin, daemon=True).start()

    def _request(self, *_):
        self.requested = True

    def _watch_stdin(self):
        # os.read, not sys.stdin: a daemon thread blocked in a buffered read holds its lock when the
        # interpreter shuts down, which aborts the shutdown.
        try:
            while os.read(0, 4096):
                pass
        except OSError:
            pass
        self.requested = True

    @property
    def due(self):
        return self.requested or (self.deadline is not None and time.monotonic() >= self.deadline)


def run_provider(args):
    clock = Gst.SystemClock.obtain()
    provider = GstNet.NetTimeProvider.new(clock, args.address, args.port)
    if provider is None:
        print(f"gst-netclock: cannot provide time on {args.address}:{args.port}", file=sys.stderr)
        return 1
    emit({"event": "ready", "address": args.address, "port": provider.props.port})
    stop = Stop(args.duration)
    while not stop.due:
        time.sleep(0.05)
    return 0


def run_client(args):
    start = time.clock_gettime_ns(time.CLOCK_MONOTONIC)
    clock = GstNet.NetClientClock.new("gst-netclock", args.address, args.port, 0)
    if clock is None:
        print(f"gst-netclock: cannot follow {args.address}:{args.port}", file=sys.stderr)
        return 1
    emit({"event": "start", "monoNs": start})
    stop = Stop(args.duration)
    interval = args.interval / 1000
    next_sample = time.monotonic()
    while not stop.due:
        before = time.clock_gettime_ns(time.CLOCK_MONOTONIC)
        value = clock.get_time()
        after = time.clock_gettime_ns(time.CLOCK_MONOTONIC)
        mono = before + (after - before) // 2
        emit({"monoNs": mono, "clockNs": value, "elapsedNs": mono - start, "synced": clock.is_synced()})
        next_sample += interval
        time.sleep(max(0.0, next_sample - time.monotonic()))
    return 0


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    modes = parser.add_subparsers(dest="mode", required=True)
    provider = modes.add_parser("provider", help="serve the system clock with GstNetTimeProvider")
    provider.add_argument("--address", default="127.0.0.1", help="address to bind (default 127.0.0.1)")
    provider.add_argument("--port", type=int, default=0, help="port (default 0: any free port)")
    provider.add_argument("--duration", type=float, help="stop after this many seconds")
    client = modes.add_parser("client", help="follow a server with GstNetClientClock")
    client.add_argument("--address", default="127.0.0.1", help="server address (default 127.0.0.1)")
    client.add_argument("--port", type=int, default=5637, help="server port (default 5637)")
    client.add_argument("--duration", type=float, help="stop after this many seconds")
    client.add_argument("--interval", type=float, default=20, help="milliseconds between samples (default 20)")
    args = parser.parse_args()
    Gst.init(None)
    return run_provider(args) if args.mode == "provider" else run_client(args)


if __name__ == "__main__":
    sys.exit(main())
