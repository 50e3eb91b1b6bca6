#!/usr/bin/env python3
"""Joins into one big room against joins into rooms of 10, before and after a change, in one
session (issue 23's "measured"):

  19,900 connections connect, upgrade, log in and join: into one room (--rooms 1), or into
  1,990 rooms of 10; per run the joins per second (connects_per_s: the whole setup), the bytes
  the server sent per join (upgrade, welcome, joined with its member list, and what the members
  heard of the others), and the server's resident memory per connection once all are in.

Usage: tests/load/big_room_bench.py BEFORE_BUILD AFTER_BUILD [PAIRS]
Both are Release build directories with parleyd; AFTER_BUILD's parley-load drives both
daemons (the same generator for every run). parleyd runs on core 0 with one worker and its
default SQLite history, the load on core 1, 32 source addresses. Each round runs the four
variants (build x shape) in turning order. Prints one JSON line per run, then the medians and
the ratios: one room / rooms of 10 per build, after / before per shape.
"""
import json
import os
import statistics
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import history_bench  # noqa: E402

CONNECTIONS = 19900
SHAPES = {"one room": "1", "rooms of 10": str(CONNECTIONS // 10)}
FIGURES = ["connects_per_s", "bytes_in_per_join", "bytes_per_connection"]
LIMITS = "[limits]\nrate_limit_per_second = 10000000\nrate_limit_burst = 10000000\n"


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    builds = {"before": sys.argv[1], "after": sys.argv[2]}
    pairs = int(sys.argv[3]) if len(sys.argv) > 3 else 3
    config = os.path.join(tempfile.mkdtemp(prefix="parley-big-room-"), "parley.toml")
    with open(config, "w") as f:
        f.write(LIMITS)
    variants = [(b, s) for b in builds for s in SHAPES]
    values = {(v, f): [] for v in variants for f in FIGURES}

    def run_one(variant):
        build, shape = variant
        args = ["idle", "--connections", str(CONNECTIONS), "--rooms", SHAPES[shape], "--source-addrs", "32",
                "--hold", "1", "--setup-timeout", "300"]
        r = history_bench.run(builds[build], "sqlite", args, config, load_build=builds["after"])
        line = {"build": build, "shape": shape, "joined": r.get("joined"), "failed": r.get("failed")}
        for f in FIGURES:
            values[(variant, f)].append(r.get(f))
            line[f] = r.get(f)
        print(json.dumps(line), flush=True)

    history_bench.interleaved(pairs, variants, run_one)
    median = {k: statistics.median(v) for k, v in values.items() if all(x is not None for x in v)}
    for f in FIGURES:
        for b in builds:
            one, ten = median.get(((b, "one room"), f)), median.get(((b, "rooms of 10"), f))
            if one and ten:
                print(f"{f} {b}: one room {one:.1f}, rooms of 10 {ten:.1f}, one/ten {one / ten:.3f}", flush=True)
        for s in SHAPES:
            a, b = median.get((("before", s), f)), median.get((("after", s), f))
            if a and b:
                print(f"{f} {s}: before {a:.1f}, after {b:.1f}, after/before {b / a:.3f}", flush=True)


if __name__ == "__main__":
    main()
