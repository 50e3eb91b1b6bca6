#!/usr/bin/env python3
"""The stored-conversation figures of docs/performance.md, in one session (token mode, SQLite store):

  dms      stored direct messages per second: senders keep a window of dms with ids in flight
           to recipients who are offline (each dm stored and acked) or online (stored, acked
           and delivered); acked dms per wall second and per server CPU-second. Afterwards every
           dm is checked: delivered (online), or in the file after a restart (offline).
  welcome  time from TCP connect to `welcome` for a user with 200 conversations (direct
           conversations and rooms with read markers) and for one with none: on the daemon
           that took the dms (their logs in memory), after a restart (read from the file), and
           with a restart before each login (the daemon's page cache empty too)
  all      both

Usage: tests/load/conversations_bench.py BUILD_DIR {dms|welcome|all} [PAIRS]
BUILD_DIR is a Release build with parleyd. parleyd runs on core 0 with one worker, this script
(its own WebSocket client: Python's standard library only) on core 1; each run waits until both
cores are idle and uses a fresh port and a fresh history file; the variants of a measurement
alternate which goes first. Prints one JSON line per run, then the medians.
The client is one Python thread: where its CPU use is near 1.0, it, not parleyd, set the pace,
and the figure that counts is acked dms per server CPU-second.
"""
import base64
import hashlib
import hmac
import json
import os
import random
import re
import selectors
import shutil
import signal
import socket
import statistics
import struct
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from history_bench import wait_idle  # noqa: E402

SECRET = b"conversations-bench-secret-of-32-bytes-or-more"
CONFIG = f"""
[limits]
rate_limit_per_second = 10000000
rate_limit_burst = 10000000

[auth]
mode = "token"
token_secret = "{SECRET.decode()}"
max_sessions_per_user = 64
"""
CLOCK_TICK = os.sysconf("SC_CLK_TCK")
DM_SECONDS, DM_WARMUP = 10, 2


# ---- tokens and the WebSocket client --------------------------------------------------------

def b64url(data):
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def token(user):
    # docs/security.md, "Minting a token".
    header = b64url(json.dumps({"alg": "HS256", "typ": "JWT"}).encode())
    claims = b64url(json.dumps({"sub": user, "exp": int(time.time()) + 3600}).encode())
    mac = hmac.new(SECRET, f"{header}.{claims}".encode(), hashlib.sha256).digest()
    return f"{header}.{claims}.{b64url(mac)}"


def text_frame(payload):
    """One masked client text frame (RFC 6455 5.2, 5.3), a fresh masking key per frame."""
    n = len(payload)
    if n < 126:
        head = struct.pack("!BB", 0x81, 0x80 | n)
    elif n < 65536:
        head = struct.pack("!BBH", 0x81, 0x80 | 126, n)
    else:
        head = struct.pack("!BBQ", 0x81, 0x80 | 127, n)
    mask = random.getrandbits(32).to_bytes(4, "big")
    # XOR as one big integer: much faster in Python than byte by byte.
    keystream = (mask * (n // 4 + 1))[:n]
    masked = (int.from_bytes(payload, "little") ^ int.from_bytes(keystream, "little")).to_bytes(n, "little")
    return head + mask + masked


class Client:
    """A blocking WebSocket connection to /ws; frames() parses what recv() brought (server frames
    are never masked). Pings are answered; a close frame ends the connection."""

    def __init__(self, port):
        self.sock = socket.create_connection(("127.0.0.1", port))
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        key = base64.b64encode(os.urandom(16)).decode()
        self.sock.sendall((f"GET /ws HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nUpgrade: websocket\r\n"
                           f"Connection: Upgrade\r\nSec-WebSocket-Key: {key}\r\n"
                           "Sec-WebSocket-Version: 13\r\n\r\n").encode())
        data = b""
        while b"\r\n\r\n" not in data:
            chunk = self.sock.recv(4096)
            if not chunk:
                raise ConnectionError("closed during the upgrade")
            data += chunk
        head, _, self.buf = data.partition(b"\r\n\r\n")
        status, *lines = head.decode().split("\r\n")
        if not status.startswith("HTTP/1.1 101"):
            raise ConnectionError("upgrade refused: " + status)
        headers = {k.strip().lower(): v.strip() for k, _, v in (line.partition(":") for line in lines)}
        accept = base64.b64encode(hashlib.sha1((key + "258EAFA5-E914-47DA-95CA-C5AB0DC85B11").encode()).digest())
        if headers.get("sec-websocket-accept") != accept.decode():
            raise ConnectionError("bad Sec-WebSocket-Accept")
        self.closed = False
        self.filled_at = None

    def send(self, obj):
        self.sock.sendall(text_frame(json.dumps(obj, separators=(",", ":")).encode()))

    def frames(self):
        """The text payloads complete in the buffer, consumed."""
        out, buf, pos = [], self.buf, 0
        while len(buf) - pos >= 2:
            b0, n = buf[pos], buf[pos + 1] & 0x7F
            start = pos + 2
            if n == 126:
                if len(buf) - pos < 4:
                    break
                n, start = int.from_bytes(buf[pos + 2:pos + 4], "big"), pos + 4
            elif n == 127:
                if len(buf) - pos < 10:
                    break
                n, start = int.from_bytes(buf[pos + 2:pos + 10], "big"), pos + 10
            if len(buf) < start + n:
                break
            opcode, payload, pos = b0 & 0x0F, buf[start:start + n], start + n
            if not b0 & 0x80:
                raise ConnectionError("fragmented server frame: not expected from parleyd")
            if opcode == 0x1:
                out.append(payload)
            elif opcode == 0x9:
                self.sock.sendall(bytes([0x8A, 0x80 | len(payload)]) + b"\0\0\0\0" + payload)
            elif opcode == 0x8:
                self.closed = True
        self.buf = buf[pos:]
        return out

    def fill(self):
        """One recv into the buffer; False at EOF."""
        chunk = self.sock.recv(65536)
        if not chunk:
            self.closed = True
            return False
        self.buf += chunk
        self.filled_at = time.perf_counter()
        return True

    def wait_for(self, pred, timeout=10):
        """The first message (decoded) for which pred holds; others are dropped."""
        deadline = time.monotonic() + timeout
        while True:
            for payload in self.frames():
                msg = json.loads(payload)
                if pred(msg):
                    return msg
            if self.closed:
                raise ConnectionError("connection closed")
            self.sock.settimeout(max(0.001, deadline - time.monotonic()))
            try:
                self.fill()
            except socket.timeout:
                raise TimeoutError("no matching message in time") from None
            finally:
                self.sock.settimeout(None)

    def request(self, obj, timeout=10):
        """Sends obj (which has an id) and returns the reply with that id; an error raises."""
        self.send(obj)
        reply = self.wait_for(lambda m: m.get("re") == obj["id"], timeout)
        if reply.get("type") == "error":
            raise RuntimeError(f"{obj['type']}: {reply}")
        return reply

    def login(self, user):
        return self.request({"type": "login", "user": user, "token": token(user), "id": "login"})

    def close(self):
        """Close handshake, then wait (bounded) for the server to end the connection."""
        try:
            self.sock.sendall(bytes([0x88, 0x82]) + b"\0\0\0\0" + struct.pack("!H", 1000))
            self.sock.settimeout(2)
            while self.sock.recv(65536):
                pass
        except OSError:
            pass
        self.sock.close()


# ---- the daemon -----------------------------------------------------------------------------

class Daemon:
    """parleyd on core 0 with one worker, on a fresh port, over the given history file."""

    def __init__(self, build, config, history):
        self.proc = subprocess.Popen(
            ["taskset", "-c", "0", f"{build}/server/parleyd", "--config", config, "--bind", "127.0.0.1",
             "--port", "0", "--threads", "1", "--history-store", "sqlite", "--history-path", history],
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        self.port = None
        for line in self.proc.stdout:
            found = re.search(r"listening on 127\.0\.0\.1:(\d+)", line)
            if found:
                self.port = int(found.group(1))
                break
        if self.port is None:
            sys.exit("parleyd did not start: " + str(self.proc.wait()))
        # Keep reading the log so the daemon never blocks on a full pipe.
        self.drain = subprocess.Popen(["cat"], stdin=self.proc.stdout, stdout=subprocess.DEVNULL)
        self.pid = self.proc.pid  # taskset execs parleyd

    def cpu_seconds(self):
        fields = open(f"/proc/{self.pid}/stat").read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / CLOCK_TICK

    def thread_cpu(self):
        """CPU seconds of each thread, by its name and its rank in start order ("parleyd/0" is
        the main thread)."""
        out = {}
        for rank, tid in enumerate(sorted(map(int, os.listdir(f"/proc/{self.pid}/task")))):
            try:
                stat = open(f"/proc/{self.pid}/task/{tid}/stat").read()
            except OSError:
                continue
            name = stat[stat.index("(") + 1:stat.rindex(")")]
            fields = stat.rsplit(")", 1)[1].split()
            out[f"{name}/{rank}"] = (int(fields[11]) + int(fields[12])) / CLOCK_TICK
        return out

    def settle(self, bound=5):
        """Waits (bounded) until the daemon used no CPU for 100 ms: start-up work is done."""
        deadline, last = time.monotonic() + bound, self.cpu_seconds()
        while time.monotonic() < deadline:
            time.sleep(0.1)
            now = self.cpu_seconds()
            if now == last:
                return
            last = now

    def stop(self):
        self.proc.send_signal(signal.SIGTERM)
        self.proc.wait(60)
        self.drain.wait(10)


def busy_between(a, b):
    """How busy each core was between two /proc/stat samples."""
    out = []
    for x, y in zip(a, b):
        total = sum(y) - sum(x)
        idle = (y[3] + y[4]) - (x[3] + x[4])
        out.append(round(1 - idle / total, 2) if total else 0)
    return out


def proc_stat():
    return [list(map(int, l.split()[1:])) for l in open("/proc/stat") if re.match(r"cpu\d", l)]


# ---- stored dms per second ------------------------------------------------------------------

def dm_run(build, config, online, senders, recipients_each, window):
    """One run: `senders` connections, each sending dms round-robin to its own
    `recipients_each` users, `window` unacked at a time, for DM_WARMUP + DM_SECONDS seconds."""
    wait_idle()
    state = tempfile.mkdtemp(prefix="parley-bench-")
    daemon = Daemon(build, config, f"{state}/history.db")
    sel = selectors.DefaultSelector()
    text = "x" * 40

    class Sender:
        def __init__(self, i):
            self.name = f"s{i}"
            self.to = [f"r{i}-{j}" for j in range(recipients_each)]
            self.client = Client(daemon.port)
            self.client.login(self.name)
            self.next, self.in_flight, self.acked, self.echoes = 0, 0, 0, 0

        def sent_to(self, j):
            return (self.next - j + recipients_each - 1) // recipients_each

        def top_up(self, sending):
            frames = []
            while sending and self.in_flight < window:
                j = self.next % recipients_each
                payload = f'{{"type":"dm","to":"{self.to[j]}","text":"{text}","id":{self.next}}}'
                frames.append(text_frame(payload.encode()))
                self.next += 1
                self.in_flight += 1
            if frames:
                self.client.sock.sendall(b"".join(frames))

    class Recipient:
        def __init__(self, name):
            self.client = Client(daemon.port)
            self.client.login(name)
            self.received = 0

    receivers = []
    if online:
        receivers = [Recipient(f"r{i}-{j}") for i in range(senders) for j in range(recipients_each)]
    pool = [Sender(i) for i in range(senders)]
    errors = []
    for s in pool:
        sel.register(s.client.sock, selectors.EVENT_READ, s)
    for r in receivers:
        sel.register(r.client.sock, selectors.EVENT_READ, r)

    def pump(sending, until, done=lambda: False):
        while time.monotonic() < until and not done():
            for key, _ in sel.select(0.05):
                peer = key.data
                if not peer.client.fill():
                    raise ConnectionError("parleyd closed a connection")
                if isinstance(peer, Recipient):
                    peer.received += sum(p.startswith(b'{"type":"dm"') for p in peer.client.frames())
                    continue
                for payload in peer.client.frames():
                    # The daemon writes "type" first; anything unexpected takes the slow path.
                    if payload.startswith(b'{"type":"ack"'):
                        peer.acked += 1
                        peer.in_flight -= 1
                    elif payload.startswith(b'{"type":"dm"'):
                        peer.echoes += 1
                    else:
                        msg = json.loads(payload)
                        if msg.get("type") == "error":
                            errors.append(msg)
                            peer.in_flight -= 1
                peer.top_up(sending)

    for s in pool:
        s.top_up(True)
    pump(True, time.monotonic() + DM_WARMUP)
    acked0, cpu0, threads0, stat0 = sum(s.acked for s in pool), daemon.cpu_seconds(), daemon.thread_cpu(), proc_stat()
    mine0, t0 = os.times(), time.monotonic()
    pump(True, t0 + DM_SECONDS)
    t1, mine1 = time.monotonic(), os.times()
    acked1, cpu1, threads1, stat1 = sum(s.acked for s in pool), daemon.cpu_seconds(), daemon.thread_cpu(), proc_stat()
    # The dms in flight are acked (and delivered) too, before the checks.
    def settled():
        acked = sum(s.acked for s in pool)
        return all(s.in_flight == 0 for s in pool) and (not online or sum(r.received for r in receivers) >= acked)
    pump(False, time.monotonic() + 10, settled)
    wall, server_cpu = t1 - t0, cpu1 - cpu0
    acked = sum(s.acked for s in pool)
    for c in [s.client for s in pool] + [r.client for r in receivers]:
        c.close()
    daemon.stop()
    # Every dm is in the file: after a restart each recipient's welcome lists its conversation
    # with the seq of the last dm sent to it.
    missing = 0
    daemon = Daemon(build, config, f"{state}/history.db")
    for s in pool:
        for j, name in enumerate(s.to):
            c = Client(daemon.port)
            welcome = c.login(name)
            seq = next((x["seq"] for x in welcome.get("conversations", []) if x.get("with") == s.name), 0)
            missing += s.sent_to(j) - seq
            c.close()
    daemon.stop()
    shutil.rmtree(state, ignore_errors=True)
    threads = {k: round(threads1.get(k, 0) - threads0.get(k, 0), 2) for k in threads1}
    return {
        "bench": "dms", "recipients": "online" if online else "offline", "senders": senders,
        "conversations": senders * recipients_each, "window": window, "seconds": round(wall, 2),
        "acked_per_s": round((acked1 - acked0) / wall),
        "acked_per_server_cpu_s": round((acked1 - acked0) / server_cpu) if server_cpu else None,
        "server_cpu_util": round(server_cpu / wall, 2),
        "server_cpu_by_thread": threads,
        "client_cpu_util": round((mine1.user + mine1.system - mine0.user - mine0.system) / wall, 2),
        "core_busy": busy_between(stat0, stat1),
        "acked": acked, "unacked": sum(s.in_flight for s in pool), "echoes": sum(s.echoes for s in pool),
        "errors": len(errors), "delivered": sum(r.received for r in receivers) if online else None,
        "missing_after_restart": missing,
    }


def dms(build, pairs, config, senders=50, recipients_each=10, window=16):
    # 50 x 16 in flight keeps parleyd busy nearly all the time on this machine; with 20 senders
    # it waited for the client a third of the time, and with windows of 64 the client was the
    # bottleneck (more dms per read then make each one cheaper for the daemon).
    rates = {"offline": [], "online": []}
    for i in range(pairs):
        for online in ([False, True] if i % 2 == 0 else [True, False]):
            r = dm_run(build, config, online, senders, recipients_each, window)
            print(json.dumps(r), flush=True)
            rates[r["recipients"]].append(r)
    for kind, runs in rates.items():
        print(f"dms to {kind} recipients ({senders} senders x {recipients_each} recipients, window {window}): "
              f"median {statistics.median(r['acked_per_s'] for r in runs):,.0f} acked/s, "
              f"{statistics.median(r['acked_per_server_cpu_s'] for r in runs):,.0f} per server CPU-second, "
              f"server at {statistics.median(r['server_cpu_util'] for r in runs):.2f} of its core, "
              f"client at {statistics.median(r['client_cpu_util'] for r in runs):.2f}", flush=True)


# ---- connect to welcome ---------------------------------------------------------------------

PEERS, ROOMS, LOGINS = 200, 3, 30
USERS = {"u0": 200, "z0": 0}  # user: conversations its welcome lists


def prepare_welcome(daemon):
    """u0: PEERS direct conversations (each peer sent u0 one dm while u0 was offline) and read
    markers in ROOMS rooms, set after the dms, so the rooms are the newest activity and the
    welcome's 200 hold the rooms and 197 conversations. z0 has nothing."""
    for p in range(PEERS):
        c = Client(daemon.port)
        c.login(f"p{p}")
        c.request({"type": "dm", "to": "u0", "text": f"hello from p{p}", "id": 1})
        c.close()
    c = Client(daemon.port)
    c.login("u0")
    for r in range(ROOMS):
        c.request({"type": "join", "room": f"room{r}", "id": f"j{r}"})
        ack = c.request({"type": "say", "room": f"room{r}", "text": "hi", "id": f"s{r}"})
        c.request({"type": "read", "room": f"room{r}", "seq": ack["seq"], "id": f"r{r}"})
    c.close()


def timed_login(port, user):
    """Milliseconds from TCP connect to the 101, and to the welcome; the welcome's size."""
    t0 = time.perf_counter()
    c = Client(port)
    t1 = time.perf_counter()
    welcome = c.login(user)
    t2 = c.filled_at  # when the welcome's last bytes arrived, before the client decoded it
    got = len(welcome.get("conversations", []))
    if got != USERS.get(user, 0):
        sys.exit(f"the welcome of {user} listed {got} conversations, not {USERS.get(user, 0)}")
    size = len(json.dumps(welcome, separators=(",", ":")))
    c.close()
    # The session's end (and the user's markers leaving memory) is processed just after the
    # close; give it that moment, so the next login finds the user offline.
    time.sleep(0.02)
    return (t1 - t0) * 1000, (t2 - t0) * 1000, size


def started(build, config, history):
    """A daemon on history, settled, past its first connection: that one pays for things done
    once (several ms in trials), so a user with nothing stored (w0) makes it."""
    daemon = Daemon(build, config, history)
    daemon.settle()
    timed_login(daemon.port, "w0")
    return daemon


def login_session(daemon_for, label):
    """LOGINS logins of each user of USERS, alternating; daemon_for() gives the daemon for the
    next login. One JSON line per user."""
    totals = {u: [] for u in USERS}
    upgrades = {u: [] for u in USERS}
    cpu = {u: 0.0 for u in USERS}
    sizes = {}
    for k in range(LOGINS):
        for u in (list(USERS) if k % 2 == 0 else list(USERS)[::-1]):
            daemon = daemon_for()
            cpu0 = daemon.cpu_seconds()
            up, total, sizes[u] = timed_login(daemon.port, u)
            cpu[u] += daemon.cpu_seconds() - cpu0
            totals[u].append(total)
            upgrades[u].append(up)
    out = []
    for u, n in USERS.items():
        times = sorted(totals[u])
        out.append({"bench": "welcome", "conversations": n, "logs": label, "logins": LOGINS,
                    "p50_ms": round(statistics.median(times), 3),
                    "p90_ms": round(times[int(0.9 * len(times))], 3),
                    "min_ms": round(times[0], 3), "max_ms": round(times[-1], 3),
                    "upgrade_p50_ms": round(statistics.median(upgrades[u]), 3), "welcome_bytes": sizes[u],
                    # Clock ticks (10 ms) summed over the logins: a rough figure.
                    "server_cpu_ms_per_login": round(cpu[u] * 1000 / LOGINS, 2)})
    return out


def welcome(build, pairs, config):
    results = {}
    labels = ("in memory", "from the file", "from the file, restart before each login")
    for i in range(pairs):
        state = tempfile.mkdtemp(prefix="parley-bench-")
        history = f"{state}/history.db"
        wait_idle()
        # In memory: the daemon that took the dms still has their logs open.
        daemon = started(build, config, history)
        prepare_welcome(daemon)
        time.sleep(0.2)  # the markers' batch written
        runs = login_session(lambda: daemon, labels[0])
        daemon.stop()  # SIGTERM writes everything to the file
        # From the file: a welcome does not open logs, so every login after a restart reads
        # the markers and each conversation's newest chunk from the file. Once per restart
        # (the connection's page cache empty), and on one daemon (the page cache warm).
        for restart_each in ([False, True] if i % 2 == 0 else [True, False]):
            wait_idle()
            if restart_each:
                current = []

                def fresh():
                    if current:
                        current.pop().stop()
                    current.append(started(build, config, history))
                    return current[0]
                runs += login_session(fresh, labels[2])
                current[0].stop()
            else:
                daemon = started(build, config, history)
                runs += login_session(lambda: daemon, labels[1])
                daemon.stop()
        for r in runs:
            print(json.dumps(r), flush=True)
            results.setdefault((r["conversations"], r["logs"]), []).append(r)
        shutil.rmtree(state, ignore_errors=True)
    for (n, logs), runs in sorted(results.items(), key=lambda kv: (labels.index(kv[0][1]), -kv[0][0])):
        print(f"welcome with {n} conversations, {logs}: connect to welcome p50 "
              f"{statistics.median(r['p50_ms'] for r in runs):.2f} ms, p90 "
              f"{statistics.median(r['p90_ms'] for r in runs):.2f} ms, server CPU about "
              f"{statistics.median(r['server_cpu_ms_per_login'] for r in runs):.1f} ms a login "
              f"(medians over {len(runs)} sessions of {LOGINS} logins)", flush=True)


def main():
    if len(sys.argv) < 3 or sys.argv[2] not in ("dms", "welcome", "all"):
        sys.exit(__doc__)
    build, what = sys.argv[1], sys.argv[2]
    pairs = int(sys.argv[3]) if len(sys.argv) > 3 else 3
    os.sched_setaffinity(0, {1})
    with tempfile.NamedTemporaryFile("w", suffix=".toml", delete=False) as config:
        config.write(CONFIG)
    try:
        if what in ("dms", "all"):
            dms(build, pairs, config.name)
        if what in ("welcome", "all"):
            welcome(build, pairs, config.name)
    finally:
        os.unlink(config.name)


if __name__ == "__main__":
    main()
