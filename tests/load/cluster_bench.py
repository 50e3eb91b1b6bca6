#!/usr/bin/env python3
"""The cluster figures of docs/cluster.md: fan-out through a three-node cluster against one node.

Usage: tests/load/cluster_bench.py BUILD_DIR [PAIRS [LOAD [SHARDS]]]
BUILD_DIR is a Release build with parleyd and parley-load; LOAD (a part of a load's name, e.g.
"99 rooms") runs only the loads it names; SHARDS (default 1) is how many redis-servers the
cluster spreads its rooms over (cluster.redis lists them all; Redis's CPU is theirs together),
or "cluster3": a Redis Cluster of three masters (created with redis-cli --cluster create), which
the nodes use with cluster.mode = "redis-cluster".
Each pair runs one load twice, interleaved: once against a single parleyd (memory history),
once against three parleyd nodes sharing fresh redis-servers. Every server process (the one node, or the three nodes and Redis)
runs on core 0 with one worker each, parley-load on core 1, so both setups get the same CPU.
In the cluster run the load generator spreads the connections over the three nodes (connection
i to node i mod 3) and puts connection i in room i mod R. With one room every message crosses
Redis to reach two thirds of its room; with 99 rooms (a multiple of 3) each room's members are
all on one node, which is the layout of "each node holds a third of the members, in separate
rooms"; with 100 rooms each room has members on every node. For the cluster runs the script also
reads each node's parley_cluster_messages_received_total and prints the largest node's share of
all messages (a node that reads only its own rooms reads about a third). Each run waits
until both cores are idle; the script prints each run's figures as one JSON line and the medians, and for the cluster
runs Redis's CPU time per say (over the whole load, warm-up included).
"""
import json
import os
import re
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request

# The idle-core wait the history figures use too.
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from history_bench import wait_idle  # noqa: E402


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_parleyd(build, extra):
    daemon = subprocess.Popen(
        ["taskset", "-c", "0", f"{build}/server/parleyd", "--config", "/dev/null", "--bind", "127.0.0.1",
         "--port", "0", "--threads", "1", "--history-store", "memory",
         "--set", "limits.rate_limit_per_second=1000000", "--set", "limits.rate_limit_burst=1000000"] + extra,
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    port = None
    for line in daemon.stdout:
        found = re.search(r"listening on 127\.0\.0\.1:(\d+)", line)
        if found:
            port = found.group(1)
        if port and (not extra or "in sync" in line):
            break
    # Keep reading the log so the daemon never blocks on a full pipe.
    drain = subprocess.Popen(["cat"], stdin=daemon.stdout, stdout=subprocess.DEVNULL)
    return daemon, drain, port


def free_cluster_port():
    """A free port whose cluster bus port (10000 higher) is free too, below 55536."""
    for port in range(17000 + os.getpid() % 5000, 30000):
        try:
            with socket.socket() as a, socket.socket() as b:
                a.bind(("127.0.0.1", port))
                b.bind(("127.0.0.1", port + 10000))
                return port
        except OSError:
            continue
    sys.exit("no free pair of ports for a Redis Cluster member")


def start_redis(workdir, cluster=False):
    port = free_cluster_port() if cluster else free_port()
    extra = ["--cluster-enabled", "yes", "--cluster-config-file", f"nodes-{port}.conf",
             "--cluster-require-full-coverage", "no"] if cluster else []
    redis = subprocess.Popen(["taskset", "-c", "0", "redis-server", "--port", str(port), "--bind", "127.0.0.1",
                              "--save", "", "--appendonly", "no", "--dir", workdir] + extra,
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    for _ in range(200):
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.2) as s:
                s.sendall(b"PING\r\n")
                if s.recv(16).startswith(b"+PONG"):
                    return redis, port
        except OSError:
            time.sleep(0.05)
    sys.exit("redis-server did not start")


def cpu_seconds(pid):
    """User plus system CPU time of a process so far (from /proc)."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def command_usec(ports):
    """Redis's own time per command (INFO commandstats: usec) and its calls, summed over the
    servers. A script's whole run counts under evalsha, and the commands it calls count under
    their own names too."""
    totals = {}
    calls = {}
    for port in ports:
        text = subprocess.run(["redis-cli", "-p", str(port), "info", "commandstats"], capture_output=True,
                              text=True).stdout
        for name, count, usec in re.findall(r"^cmdstat_([a-z|]+):calls=(\d+),usec=(\d+)", text, re.M):
            totals[name] = totals.get(name, 0) + int(usec)
            calls[name] = calls.get(name, 0) + int(count)
    return totals, calls


def messages_received(port):
    """A node's parley_cluster_messages_received_total, from its /metrics."""
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=10) as answer:
        text = answer.read().decode()
    found = re.search(r"^parley_cluster_messages_received_total (\d+)", text, re.M)
    return int(found.group(1)) if found else None


def run(build, cluster, load_args, shards=1):
    wait_idle()
    workdir = tempfile.mkdtemp(prefix="parley-cluster-bench-")
    redises = []
    redis_ports = []
    nodes = []
    try:
        if cluster:
            urls = []
            redis_cluster = shards == "cluster3"
            for _ in range(3 if redis_cluster else int(shards)):
                redis, redis_port = start_redis(workdir, redis_cluster)
                redises.append(redis)
                urls.append(f"redis://127.0.0.1:{redis_port}")
                redis_ports.append(redis_port)
            mode = []
            if redis_cluster:
                subprocess.run(["redis-cli", "--cluster", "create"] + [u[len("redis://"):] for u in urls] +
                               ["--cluster-yes"], check=True, stdout=subprocess.DEVNULL)
                for _ in range(400):
                    info = subprocess.run(["redis-cli", "-p", urls[0].rsplit(":", 1)[1], "cluster", "info"],
                                          capture_output=True, text=True).stdout
                    if "cluster_state:ok" in info:
                        break
                    time.sleep(0.05)
                mode = ["--cluster-mode", "redis-cluster"]
            for i in range(3):
                nodes.append(start_parleyd(build, ["--cluster-redis", ",".join(urls), "--node-id", f"node-{i}"] +
                                           mode))
        else:
            nodes.append(start_parleyd(build, []))
        ports = ",".join(n[2] for n in nodes)
        pids = [str(n[0].pid) for n in nodes] + [str(r.pid) for r in redises]
        redis_cpu_before = sum(cpu_seconds(r.pid) for r in redises)
        load = subprocess.run(["taskset", "-c", "1", f"{build}/tests/load/parley-load"] + load_args +
                              ["--port", ports, "--server-pid", ",".join(pids)],
                              capture_output=True, text=True, timeout=600)
        redis_cpu = sum(cpu_seconds(r.pid) for r in redises) - redis_cpu_before
        by_command, calls = command_usec(redis_ports) if cluster else ({}, {})
        received = [messages_received(n[2]) for n in nodes] if cluster else []
    finally:
        for daemon, drain, _ in nodes:
            daemon.send_signal(signal.SIGTERM)
            daemon.wait(60)
            drain.wait(10)
        for redis in redises:
            redis.terminate()
            redis.wait(10)
        shutil.rmtree(workdir, ignore_errors=True)
    lines = [l for l in load.stdout.splitlines() if l.startswith("{")]
    if not lines:
        sys.exit("parley-load failed: " + load.stdout + load.stderr)
    result = json.loads(lines[-1])
    if cluster and result.get("says_sent"):
        # Redis's CPU over the whole load (warm-up included) per say sent in it.
        result["redis_cpu_s"] = round(redis_cpu, 3)
        result["redis_cpu_us_per_say"] = round(redis_cpu * 1e6 / result["says_sent"], 2)
        # Where Redis's command time went, per say (the rest of its CPU: reading, writing, its loop).
        result["redis_command_us_per_say"] = {name: round(usec / result["says_sent"], 2)
                                              for name, usec in sorted(by_command.items(), key=lambda x: -x[1])
                                              if usec / result["says_sent"] >= 0.01}
        # How many says one script call carried on average (the node batches what its loop
        # gathered while its previous batch was out).
        if calls.get("evalsha"):
            result["says_per_script_call"] = round(result["says_sent"] / calls["evalsha"], 2)
        # How many says one room's entry carried (INCRBY runs once per room of a batch, in the
        # batch script only): Redis's costs per room (INCRBY, XADD, SPUBLISH) divide by this.
        if calls.get("incrby"):
            result["says_per_room_entry"] = round(result["says_sent"] / calls["incrby"], 2)
    if received and None not in received:
        # Every message is read by at least one node (its sender's), so the sum of the nodes'
        # counts over the says sent says how often a message is read; the largest share is the
        # busiest node's part of all messages (warm-up included).
        result["messages_received_per_node"] = received
        result["largest_node_share"] = round(max(received) / max(1, result.get("says_sent", 0)), 3)
    return result


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    build = sys.argv[1]
    pairs = int(sys.argv[2]) if len(sys.argv) > 2 else 3
    only = sys.argv[3] if len(sys.argv) > 3 else ""
    shards = sys.argv[4] if len(sys.argv) > 4 else "1"
    loads = {
        "1 room x 999, window 8": ["fanout", "--connections", "999", "--rooms", "1", "--publishers", "1",
                                   "--window", "8", "--duration", "10"],
        "99 rooms x 10, 99 publishers, window 8": ["fanout", "--connections", "990", "--rooms", "99",
                                                   "--publishers", "99", "--window", "8", "--duration", "10"],
        "100 rooms x 10 on every node, 100 publishers, window 8": [
            "fanout", "--connections", "1000", "--rooms", "100", "--publishers", "100", "--window", "8",
            "--duration", "10"],
    }
    for name, args in loads.items():
        if only not in name:
            continue
        figures = {"single": [], "cluster": []}
        for i in range(pairs):
            for setup in ("single", "cluster") if i % 2 == 0 else ("cluster", "single"):
                r = run(build, setup == "cluster", args, shards)
                r["setup"] = setup
                r["load"] = name
                print(json.dumps(r), flush=True)
                if r.get("lost", 0) or r.get("seq_gaps", 0) or r.get("seq_backwards", 0) or r.get("dropped_connections", 0):
                    print(f"warning: {setup} run lost or repeated messages", file=sys.stderr)
                figures[setup].append(r)
        for key in ("deliveries_per_s", "deliveries_per_server_cpu_s"):
            single = statistics.median(x[key] for x in figures["single"])
            cluster = statistics.median(x[key] for x in figures["cluster"])
            print(f"{name}: {key} median single {single:,.0f}, cluster {cluster:,.0f}, "
                  f"ratio {cluster / single:.2f}", flush=True)
        for setup in ("single", "cluster"):
            p50 = statistics.median(x["latency_us"]["p50"] for x in figures[setup])
            p99 = statistics.median(x["latency_us"]["p99"] for x in figures[setup])
            print(f"{name}: {setup} latency p50 {p50:,.0f} us, p99 {p99:,.0f} us", flush=True)
        redis_per_say = [x["redis_cpu_us_per_say"] for x in figures["cluster"] if "redis_cpu_us_per_say" in x]
        if redis_per_say:
            print(f"{name}: Redis CPU per say, median {statistics.median(redis_per_say):.2f} us", flush=True)
        shares = [x["largest_node_share"] for x in figures["cluster"] if "largest_node_share" in x]
        if shares:
            print(f"{name}: the busiest node read {statistics.median(shares):.0%} of all messages (median)",
                  flush=True)


if __name__ == "__main__":
    main()
