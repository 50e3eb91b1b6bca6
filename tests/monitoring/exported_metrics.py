"""The metrics a real parleyd exports: starts the daemon on a free port, scrapes GET /metrics and
reads the Prometheus text format into series names with their labels and label values.

The cluster's metrics exist only on a node with [cluster] set, so the daemon runs twice: once
alone, once as a cluster node whose Redis is a port nothing listens on. Such a node starts
degraded and exports every parley_cluster_* family, which is all a scrape needs to see.
"""

import re
import socket
import subprocess
import tempfile
import threading
import time
import urllib.request
from pathlib import Path

_SAMPLE = re.compile(r"^(?P<name>[a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(?P<labels>.*)\})?\s+(?P<value>\S+)(?:\s+\S+)?$")
_LABEL = re.compile(r'\s*(?P<name>[a-zA-Z_][a-zA-Z0-9_]*)="(?P<value>(?:[^"\\]|\\.)*)"\s*(?:,|$)')
_LISTENING = re.compile(r"listening on 127\.0\.0\.1:(\d+)")


class Exported:
    """Series names (as PromQL sees them) -> label name -> the values seen."""

    def __init__(self):
        self.series = {}
        self.types = {}  # family name from # TYPE -> counter, gauge, histogram, ...

    def add_text(self, text):
        """Reads one scrape; raises ValueError on a line it cannot read."""
        for number, line in enumerate(text.splitlines(), 1):
            if not line.strip():
                continue
            if line.startswith("#"):
                parts = line.split(None, 3)
                if len(parts) >= 4 and parts[1] == "TYPE":
                    self.types[parts[2]] = parts[3].strip()
                continue
            m = _SAMPLE.match(line)
            if m is None:
                raise ValueError(f"/metrics line {number} is not a sample: {line!r}")
            labels = self.series.setdefault(m.group("name"), {})
            text_labels = m.group("labels") or ""
            pos = 0
            while pos < len(text_labels):
                lm = _LABEL.match(text_labels, pos)
                if lm is None:
                    raise ValueError(f"/metrics line {number}: cannot read the labels {text_labels!r}")
                labels.setdefault(lm.group("name"), set()).add(lm.group("value"))
                pos = lm.end()

    def names(self):
        """Every name a PromQL expression may select: each # TYPE family under the names Prometheus
        stores it as (a histogram only as _bucket, _sum and _count; a counter without _total also
        as name_total, as OpenMetrics writes it), and every sample's own name."""
        names = set(self.series)
        for family, kind in self.types.items():
            if kind in ("histogram", "summary"):
                names.update(family + suffix for suffix in ("_sum", "_count"))
                if kind == "histogram":
                    names.add(family + "_bucket")
            else:
                names.add(family)
                if kind == "counter" and not family.endswith("_total"):
                    names.add(family + "_total")
        return names

    def histogram_families(self):
        return {f for f, kind in self.types.items() if kind in ("histogram", "summary")}

    def labels(self, name):
        return self.series.get(name, {})


def _free_port_holder():
    """A bound socket that does not listen: connecting to its port is refused for as long as it
    stays open, and no other process can take the port meanwhile."""
    holder = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    holder.bind(("127.0.0.1", 0))
    return holder


def scrape_daemon(parleyd, extra_args, workdir, timeout=20):
    """Starts parleyd on a free port with a config file of its own, returns the /metrics text."""
    config = Path(workdir) / "parley.toml"
    # A config file of its own, so that no /etc/parley/parley.toml on this machine applies.
    config.write_text(
        "[server]\nbind = \"127.0.0.1\"\nport = 0\nthreads = 1\n\n"
        f"[history]\npath = \"{Path(workdir) / 'history.db'}\"\n\n"
        "[metrics]\nenabled = true\n")
    daemon = subprocess.Popen([parleyd, "--config", str(config), *extra_args], stdout=subprocess.PIPE,
                              stderr=subprocess.STDOUT, text=True)
    log = []
    found = threading.Event()
    port = []

    def read_log():
        # Keeps reading until the daemon exits, so it never blocks on a full pipe.
        for line in daemon.stdout:
            log.append(line)
            m = _LISTENING.search(line)
            if m and not port:
                port.append(int(m.group(1)))
                found.set()
        found.set()

    reader = threading.Thread(target=read_log, daemon=True)
    reader.start()
    try:
        if not found.wait(timeout) or not port:
            raise RuntimeError("parleyd did not start: " + "".join(log[-20:]))
        deadline = time.monotonic() + timeout
        while True:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port[0]}/metrics", timeout=5) as reply:
                    return reply.read().decode()
            except OSError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.1)
    finally:
        daemon.terminate()
        try:
            daemon.wait(30)
        except subprocess.TimeoutExpired:
            daemon.kill()
            daemon.wait()
        reader.join(5)


def exported_by(parleyd):
    """Everything parleyd exports, alone and as a (degraded) cluster node."""
    exported = Exported()
    with tempfile.TemporaryDirectory(prefix="parley-monitoring-") as alone:
        exported.add_text(scrape_daemon(parleyd, [], alone))
    holder = _free_port_holder()
    try:
        with tempfile.TemporaryDirectory(prefix="parley-monitoring-") as clustered:
            redis = f"redis://127.0.0.1:{holder.getsockname()[1]}"
            text = scrape_daemon(parleyd, ["--cluster-redis", redis, "--node-id", "monitoring-check"], clustered)
            if "parley_cluster_degraded" not in text:
                raise RuntimeError("a cluster node's /metrics has no parley_cluster_degraded")
            exported.add_text(text)
    finally:
        holder.close()
    return exported
