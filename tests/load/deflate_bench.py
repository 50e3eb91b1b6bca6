#!/usr/bin/env python3
"""permessage-deflate on against off on one build, in one session (issue 21's compression
figures):

  fan-out, 1 room of 1,000 and 100 rooms of 10 (window 8), with says of 64 and 300 bytes of
  text made of everyday words (parley-load --words): deliveries per server CPU-second, and
  bytes on the wire per delivery (what the clients read during the measured seconds, divided
  by the deliveries)
  idle: server RSS per logged-in connection at 19,900 connections, with compression negotiated
  on every connection against none

Usage: tests/load/deflate_bench.py BUILD [PAIRS [LOAD]]
BUILD is a Release build directory with parleyd and parley-load. parleyd runs on core 0 with one
worker and its default SQLite history, the load on core 1 (as before_after_bench.py). "on" is
compression = "on" with compression_min_bytes = 0 (every message compressed, to see what typical
chat messages cost and save) and parley-load --deflate; "off" is the default configuration. Each
pair runs both, alternating which goes first. LOAD (a part of a load's name) runs only the loads
it names. Prints one JSON line per run, then the medians and their ratio (on / off).
"""
import os
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import history_bench  # noqa: E402


def fanout(rooms, size):
    return ["fanout", "--connections", "1000", "--rooms", str(rooms), "--publishers", str(rooms), "--window", "8",
            "--duration", "10", "--size", str(size), "--words"]


FANOUT_FIGURES = ["deliveries_per_server_cpu_s", "bytes_per_delivery"]
LOADS = {
    "fan-out 1 room x 1000, 64-byte texts": (fanout(1, 64), FANOUT_FIGURES),
    "fan-out 100 rooms x 10, 64-byte texts": (fanout(100, 64), FANOUT_FIGURES),
    "fan-out 1 room x 1000, 300-byte texts": (fanout(1, 300), FANOUT_FIGURES),
    "fan-out 100 rooms x 10, 300-byte texts": (fanout(100, 300), FANOUT_FIGURES),
    "idle 19,900 connections": (["idle", "--connections", "19900", "--source-addrs", "4", "--hold", "3"],
                                ["bytes_per_connection"]),
}

LIMITS = "[limits]\nrate_limit_per_second = 10000000\nrate_limit_burst = 10000000\n"


def configs(directory):
    off, on = os.path.join(directory, "off.toml"), os.path.join(directory, "on.toml")
    with open(off, "w") as f:
        f.write(LIMITS)
    with open(on, "w") as f:
        f.write('[server]\ncompression = "on"\ncompression_min_bytes = 0\n\n' + LIMITS)
    return {"off": (off, []), "on": (on, ["--deflate"])}


def figure(result, name):
    if name == "bytes_per_delivery":
        return result["measured_bytes_in"] / result["measured_deliveries"]
    return result[name]


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    setups = configs(tempfile.mkdtemp(prefix="parley-deflate-bench-"))
    history_bench.compare_setups(sys.argv[1], LOADS, setups, figure, sys.argv, "compression")


if __name__ == "__main__":
    main()
