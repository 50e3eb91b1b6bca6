#!/usr/bin/env python3
"""The durable-history figures of docs/performance.md, in one session:

  stores   say throughput with the memory and the SQLite history store, runs interleaved
  readers  fan-out latency at a fixed rate with and without history readers (SQLite store)

Usage: tests/load/history_bench.py BUILD_DIR {stores|readers} [PAIRS]
BUILD_DIR is a Release build with parleyd and parley-load. parleyd runs on core 0 with one
worker, parley-load on core 1; each run waits until both cores are idle, uses a fresh port and
a fresh history file, and prints parley-load's figures as one JSON line.
"""
import json
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time


def core_busy():
    def sample():
        return [list(map(int, l.split()[1:])) for l in open("/proc/stat") if re.match(r"cpu\d", l)]
    a = sample()
    time.sleep(1)
    b = sample()
    busy = []
    for x, y in zip(a, b):
        total = sum(y) - sum(x)
        idle = (y[3] + y[4]) - (x[3] + x[4])
        busy.append(1 - idle / total if total else 0)
    return busy


def wait_idle():
    for _ in range(120):
        if sum(core_busy()) < 0.25:
            return
    print("warning: the cores never went idle", file=sys.stderr)


def interleaved(pairs, variants, run_one):
    """Runs run_one(variant) once per variant in each of `pairs` rounds, the order of the
    variants turning round by round so that neither always goes first; returns the results as
    {variant: [result, ...]}."""
    results = {v: [] for v in variants}
    for i in range(pairs):
        shift = i % len(variants)
        for v in variants[shift:] + variants[:shift]:
            results[v].append(run_one(v))
    return results


def compare_setups(build, loads, setups, figure, argv, label):
    """One build under two setups, in one session: for each load of `loads` ({name: (load
    arguments, [figure names])}) whose name contains argv[3] (when given), argv[2] (default 3)
    pairs of runs, one under each setup of `setups` ({variant: (config file, extra load
    arguments)}, the baseline first) in turning order; prints one JSON line per run (the
    variant under the key `label`), then per figure the medians and their ratio (second /
    first). figure(result, name) reads a figure from parley-load's result."""
    pairs = int(argv[2]) if len(argv) > 2 else 3
    only = argv[3] if len(argv) > 3 else ""
    variants = list(setups)
    for name, (args, figures) in loads.items():
        if only not in name:
            continue
        values = {(v, f): [] for v in variants for f in figures}

        def run_one(variant, name=name, args=args, figures=figures, values=values):
            config, extra = setups[variant]
            r = run(build, "sqlite", args + extra, config)
            line = {"load": name, label: variant, "errors": r.get("errors_total"), "lost": r.get("lost")}
            for f in figures:
                values[(variant, f)].append(figure(r, f))
                line[f] = values[(variant, f)][-1]
            print(json.dumps(line), flush=True)

        interleaved(pairs, variants, run_one)
        first, second = variants
        for f in figures:
            a, b = statistics.median(values[(first, f)]), statistics.median(values[(second, f)])
            print(f"{name}: {f} median {first} {a:.1f}, {second} {b:.1f}, {second}/{first} {b / a:.3f}", flush=True)


def run(build, store, load_args, config, load_build=None):
    """One daemon of `build` on core 0 and one parley-load run (of load_build, default the same
    build) on core 1; returns parley-load's result line."""
    wait_idle()
    state = tempfile.mkdtemp(prefix="parley-bench-")
    daemon = subprocess.Popen(
        ["taskset", "-c", "0", f"{build}/server/parleyd", "--config", config, "--bind", "127.0.0.1", "--port", "0",
         "--threads", "1", "--history-store", store, "--history-path", f"{state}/history.db"],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    port = None
    for line in daemon.stdout:
        found = re.search(r"listening on 127\.0\.0\.1:(\d+)", line)
        if found:
            port = found.group(1)
            break
    # Keep reading the log so the daemon never blocks on a full pipe.
    drain = subprocess.Popen(["cat"], stdin=daemon.stdout, stdout=subprocess.DEVNULL)
    load = subprocess.run(["taskset", "-c", "1", f"{load_build or build}/tests/load/parley-load"] + load_args +
                          ["--port", port, "--server-pid", str(daemon.pid)], capture_output=True, text=True, timeout=600)
    daemon.send_signal(signal.SIGTERM)
    daemon.wait(60)
    drain.wait(10)
    shutil.rmtree(state, ignore_errors=True)
    lines = [l for l in load.stdout.splitlines() if l.startswith("{")]
    if not lines:
        sys.exit("parley-load failed: " + load.stdout + load.stderr)
    return json.loads(lines[-1])


def stores(build, pairs, config):
    loads = {
        "100 rooms x 10, window 8": ["fanout", "--connections", "1000", "--rooms", "100", "--publishers", "100",
                                     "--window", "8", "--duration", "10"],
        "1 room x 1000, window 8": ["fanout", "--connections", "1000", "--rooms", "1", "--publishers", "1",
                                    "--window", "8", "--duration", "10"],
    }
    for name, args in loads.items():
        says = {"memory": [], "sqlite": []}
        for i in range(pairs):
            for store in (["memory", "sqlite"] if i % 2 == 0 else ["sqlite", "memory"]):
                r = run(build, store, args, config)
                says[store].append(r["says_per_s"])
                print(json.dumps({"load": name, "store": store, "says_per_s": r["says_per_s"],
                                  "deliveries_per_server_cpu_s": r.get("deliveries_per_server_cpu_s"),
                                  "lost": r["lost"], "seq_gaps": r["seq_gaps"], "core_busy": r["core_busy"]}), flush=True)
        m, s = statistics.median(says["memory"]), statistics.median(says["sqlite"])
        print(f"{name}: says/s median memory {m:.0f}, sqlite {s:.0f}, sqlite/memory {s / m:.3f}", flush=True)


def readers(build, pairs, config):
    base = ["fanout", "--connections", "1000", "--rooms", "100", "--publishers", "100", "--rate", "2000",
            "--duration", "10"]
    for i in range(pairs):
        for count in ([0, 2] if i % 2 == 0 else [2, 0]):
            r = run(build, "sqlite", base + (["--history-readers", str(count)] if count else []), config)
            out = {"history_readers": count, "latency_us": r["latency_us"], "lost": r["lost"],
                   "seq_gaps": r["seq_gaps"], "server_cpu_util": r.get("server_cpu_util")}
            for key in ("history_requests_per_s", "history_messages", "history_requests", "history_p50_ms",
                        "history_p99_ms", "history_max_ms", "history_errors"):
                if key in r:
                    out[key] = r[key]
            print(json.dumps(out), flush=True)


def main():
    if len(sys.argv) < 3 or sys.argv[2] not in ("stores", "readers"):
        sys.exit(__doc__)
    build, what = sys.argv[1], sys.argv[2]
    pairs = int(sys.argv[3]) if len(sys.argv) > 3 else 3
    with tempfile.NamedTemporaryFile("w", suffix=".toml", delete=False) as config:
        # A publisher sends far more than the default 200 requests/s.
        config.write("[limits]\nrate_limit_per_second = 10000000\nrate_limit_burst = 10000000\n")
    (stores if what == "stores" else readers)(build, pairs, config.name)


if __name__ == "__main__":
    main()
