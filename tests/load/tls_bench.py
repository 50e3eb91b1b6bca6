#!/usr/bin/env python3
"""ws against wss on one build, in one session (issue 21's "wss is measured"):

  fan-out, 1 room of 1,000 and 100 rooms of 10 (window 8): deliveries per server CPU-second
  churn (connect, TLS, upgrade, login, join, say, close; 50 at once): cycles per second, which
  over wss are TLS handshakes per second, and cycles per server CPU-second

Usage: tests/load/tls_bench.py BUILD [PAIRS [LOAD]]
BUILD is a Release build directory with parleyd and parley-load. parleyd runs on core 0 with
one worker and its default SQLite history, the load on core 1 (as before_after_bench.py); each
pair runs ws and wss back to back, alternating which goes first. The wss daemon gets a
self-signed EC P-256 certificate made for the run with the openssl command. LOAD (a part of a
load's name) runs only the loads it names. Prints one JSON line per run, then the medians and
their ratio (wss / ws).
"""
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import history_bench  # noqa: E402

LOADS = {
    "fan-out 1 room x 1000": (["fanout", "--connections", "1000", "--rooms", "1", "--publishers", "1",
                               "--window", "8", "--duration", "10"], ["deliveries_per_server_cpu_s"]),
    "fan-out 100 rooms x 10": (["fanout", "--connections", "1000", "--rooms", "100", "--publishers", "100",
                                "--window", "8", "--duration", "10"], ["deliveries_per_server_cpu_s"]),
    "churn 50 at once": (["churn", "--concurrency", "50", "--duration", "10"],
                         ["cycles_per_s", "cycles_per_server_cpu_s"]),
}

LIMITS = "[limits]\nrate_limit_per_second = 10000000\nrate_limit_burst = 10000000\n"


def configs(directory):
    cert, key = os.path.join(directory, "cert.pem"), os.path.join(directory, "key.pem")
    subprocess.run(["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes",
                    "-keyout", key, "-out", cert, "-days", "1", "-subj", "/CN=localhost"],
                   check=True, capture_output=True)
    plain, secure = os.path.join(directory, "ws.toml"), os.path.join(directory, "wss.toml")
    with open(plain, "w") as f:
        f.write(LIMITS)
    with open(secure, "w") as f:
        f.write(f'[tls]\ncert_file = "{cert}"\nkey_file = "{key}"\n\n' + LIMITS)
    return {"ws": (plain, []), "wss": (secure, ["--tls"])}


def figure(result, name):
    if name == "cycles_per_server_cpu_s":
        cpu = result.get("server_cpu_s")
        return result["cycles"] / cpu if cpu else None
    return result[name]


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    setups = configs(tempfile.mkdtemp(prefix="parley-tls-bench-"))
    history_bench.compare_setups(sys.argv[1], LOADS, setups, figure, sys.argv, "transport")


if __name__ == "__main__":
    main()
