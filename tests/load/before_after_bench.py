#!/usr/bin/env python3
"""Two builds of parleyd side by side, in one session: what a change did to the figures every
issue that touches the daemon reports (docs/performance.md).

  fan-out, 1 room of 1,000 and 100 rooms of 10 (window 8): deliveries per server CPU-second
  idle: server RSS per logged-in connection at 19,900 connections

Usage: tests/load/before_after_bench.py BEFORE_BUILD AFTER_BUILD [PAIRS [LOAD]]
Each BUILD is a Release build directory with parleyd and parley-load (each build's own
parley-load drives it). parleyd runs on core 0 with one worker and its default SQLite history
(a fresh file per run), the load on core 1; each run waits until both cores are idle, and the
two builds' runs alternate which goes first. LOAD (a part of a load's name, e.g. "100 rooms")
runs only the loads it names. Prints one JSON line per run, then the medians and their ratio
(after / before).

AFTER_CONFIG=FILE adds that TOML to the "after" runs' configuration only: one build against
itself with a feature on (e.g. a [[webhooks]] receiver, tests/load/webhook_sink.py).
"""
import json
import os
import statistics
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import history_bench  # noqa: E402

LOADS = {
    "fan-out 1 room x 1000": (["fanout", "--connections", "1000", "--rooms", "1", "--publishers", "1",
                               "--window", "8", "--duration", "10"], "deliveries_per_server_cpu_s"),
    "fan-out 100 rooms x 10": (["fanout", "--connections", "1000", "--rooms", "100", "--publishers", "100",
                                "--window", "8", "--duration", "10"], "deliveries_per_server_cpu_s"),
    "idle 19,900 connections": (["idle", "--connections", "19900", "--source-addrs", "4", "--hold", "3"],
                                "bytes_per_connection"),
}


def run(build, load_args, config):
    # history_bench's run: a fresh port and history file, the daemon on core 0, the load on 1.
    return history_bench.run(build, "sqlite", load_args, config)


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    builds = {"before": sys.argv[1], "after": sys.argv[2]}
    pairs = int(sys.argv[3]) if len(sys.argv) > 3 else 3
    only = sys.argv[4] if len(sys.argv) > 4 else ""
    with tempfile.NamedTemporaryFile("w", suffix=".toml", delete=False) as config:
        # A publisher sends far more than the default 200 requests/s.
        config.write("[limits]\nrate_limit_per_second = 10000000\nrate_limit_burst = 10000000\n")
    configs = {"before": config.name, "after": config.name}
    if os.environ.get("AFTER_CONFIG"):
        with tempfile.NamedTemporaryFile("w", suffix=".toml", delete=False) as after:
            with open(config.name) as common, open(os.environ["AFTER_CONFIG"]) as extra:
                after.write(common.read() + extra.read())
        configs["after"] = after.name
    for name, (args, figure) in LOADS.items():
        if only not in name:
            continue
        values = {"before": [], "after": []}

        def run_one(which, name=name, args=args, figure=figure, values=values):
            r = run(builds[which], args, configs[which])
            values[which].append(r[figure])
            print(json.dumps({"load": name, "build": which, figure: r[figure], "lost": r.get("lost"),
                              "core_busy": r.get("core_busy")}), flush=True)

        history_bench.interleaved(pairs, ["before", "after"], run_one)
        b, a = statistics.median(values["before"]), statistics.median(values["after"])
        print(f"{name}: {figure} median before {b:.0f}, after {a:.0f}, after/before {a / b:.3f}", flush=True)


if __name__ == "__main__":
    main()
