#!/usr/bin/env python3
"""Redis's CPU time per say in the says script alone, without parleyd: for trying the script's
variants against each other before a cluster run.

Usage: tests/load/says_script_bench.py [--rooms R] [--per-room K] [--calls N] [--rounds M] [VARIANT.lua ...]
Starts a fresh redis-server on a free port (core 0), loads the says script of
rooms/cluster/cluster_scripts.hpp ("current") and each VARIANT file (Lua text with the same
KEYS and ARGV), and one subscriber connection that subscribes to every room's channel and reads
what is published (as a node feeding the rooms would). Then, M rounds, each script in turn:
N calls of R rooms with K says each (the layout the node sends: per room its count, its channel
and its block of says, said_batch.hpp, each say with a 64-character text), four calls in
flight. Prints, per script, Redis's CPU time (INFO cpu) per say of each round and the
median, and at the end Redis's command times (INFO commandstats) over all rounds and scripts
together. The cluster bench (cluster_bench.py) prints K as says_per_room_entry and R*K as
says_per_script_call; use those to make this load look like a cluster's.
"""
import argparse
import os
import re
import socket
import statistics
import subprocess
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from cluster_bench import free_port  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
SCRIPTS = os.path.join(HERE, "..", "..", "rooms", "cluster", "cluster_scripts.hpp")


def command(*args):
    out = [b"*%d\r\n" % len(args)]
    for a in args:
        a = a.encode() if isinstance(a, str) else a
        out.append(b"$%d\r\n%s\r\n" % (len(a), a))
    return b"".join(out)


class Connection:
    """A blocking RESP connection: enough to send commands and read their replies."""

    def __init__(self, port):
        self.sock = socket.create_connection(("127.0.0.1", port))
        self.buffer = b""

    def send(self, data):
        self.sock.sendall(data)

    def _more(self):
        data = self.sock.recv(1 << 20)
        if not data:
            raise EOFError("redis closed the connection")
        self.buffer += data

    def _line(self):
        while b"\r\n" not in self.buffer:
            self._more()
        line, self.buffer = self.buffer.split(b"\r\n", 1)
        return line

    def read(self):
        line = self._line()
        kind = line[:1]
        if kind in (b"+", b":"):
            return line[1:]
        if kind == b"-":
            raise RuntimeError(line.decode())
        if kind == b"$":
            n = int(line[1:])
            if n < 0:
                return None
            while len(self.buffer) < n + 2:
                self._more()
            value, self.buffer = self.buffer[:n], self.buffer[n + 2:]
            return value
        if kind in (b"*", b">"):
            return [self.read() for _ in range(int(line[1:]))]
        raise RuntimeError(f"unexpected reply {line!r}")

    def call(self, *args):
        self.send(command(*args))
        return self.read()


def current_script():
    text = open(SCRIPTS).read()
    found = re.search(r'inline constexpr std::string_view says = R"lua\((.*?)\)lua";', text, re.S)
    return found.group(1)


def say_lines(number, first_number):
    # One say of a room's block as the node writes it (said_batch.hpp): its number in the node's
    # run and its time (the same for every say here) as offsets from the block's first line, the
    # ack ticket, the sender and the text as a JSON string.
    text = ("message %d " % number).ljust(64, "x")
    return '%d\n0\n1.%d.%d\nuser-%d\n"%s"' % (number - first_number, number % 7, number, number % 1000, text)


def block_of(first_number, count):
    # A room's block: "NODE:RUN:NUMBER0:TS0", then its says.
    return "\n".join(["node-1:1765000000:%d:1765000000000" % first_number] +
                     [say_lines(first_number + k, first_number) for k in range(count)])


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rooms", type=int, default=9)
    parser.add_argument("--per-room", type=int, default=8)
    parser.add_argument("--calls", type=int, default=2000)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("variants", nargs="*")
    options = parser.parse_args()
    scripts = {"current": current_script()}
    for path in options.variants:
        scripts[os.path.basename(path)] = open(path).read()

    port = free_port()
    server = subprocess.Popen(["taskset", "-c", "0", "redis-server", "--port", str(port), "--bind", "127.0.0.1",
                               "--save", "", "--appendonly", "no"], stdout=subprocess.DEVNULL)
    try:
        for _ in range(100):
            try:
                client = Connection(port)
                client.call("PING")
                break
            except OSError:
                time.sleep(0.05)
        rooms = ["lobby-%d" % i for i in range(options.rooms)]
        # Each room in a partition of its own, as parley names them (cluster_keys.hpp).
        channel = {room: "parley:{p%d}:room:%s:events" % (i, room) for i, room in enumerate(rooms)}
        subscriber = Connection(port)
        subscriber.send(command("SSUBSCRIBE", *channel.values()))
        for _ in rooms:
            subscriber.read()
        reading = True

        def drain():
            try:
                while reading and subscriber.sock.recv(1 << 20):
                    pass
            except OSError:
                pass

        threading.Thread(target=drain, daemon=True).start()
        shas = {name: client.call("SCRIPT", "LOAD", text).decode() for name, text in scripts.items()}
        client.call("CONFIG", "RESETSTAT")

        def cpu_seconds():
            lines = client.call("INFO", "cpu").decode().split("\r\n")
            info = dict(line.split(":", 1) for line in lines if ":" in line)
            return float(info["used_cpu_user"]) + float(info["used_cpu_sys"])

        per_say = {name: [] for name in scripts}
        number = 0
        for _ in range(options.rounds):
            for name, sha in shas.items():
                before = cpu_seconds()
                says = 0
                in_flight = 0
                for _ in range(options.calls):
                    keys = []
                    args = ["10000", str(len(rooms))]
                    for i, room in enumerate(rooms):
                        # Keys of their own per script, so each starts its streams from nothing alike.
                        keys += ["parley:{p%d}:room:%s:seq:%s" % (i, room, name),
                                 "parley:{p%d}:room:%s:log:%s" % (i, room, name)]
                        block = block_of(number, options.per_room)
                        number += options.per_room
                        args += [str(options.per_room), channel[room], block]
                        says += options.per_room
                    client.send(command("EVALSHA", sha, str(len(keys)), *keys, *args))
                    in_flight += 1
                    if in_flight == 4:
                        client.read()
                        in_flight -= 1
                while in_flight:
                    client.read()
                    in_flight -= 1
                per_say[name].append((cpu_seconds() - before) * 1e6 / says)
        for name, values in per_say.items():
            print(f"{name}: Redis CPU per say median {statistics.median(values):.2f} us "
                  f"({'; '.join(f'{v:.2f}' for v in values)})")
        for line in client.call("INFO", "commandstats").decode().split("\r\n"):
            if line.startswith("cmdstat_"):
                print(line)
        reading = False
    finally:
        server.terminate()
        server.wait()


if __name__ == "__main__":
    main()
