#!/usr/bin/env python3
"""A webhook receiver for benchmarks: answers every POST with 204 and counts the events.

Usage: tests/load/webhook_sink.py PORT
Serves on 127.0.0.1:PORT until interrupted, then prints the batches and events it took.
"""
import json
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

taken = {"batches": 0, "events": 0}


class Sink(BaseHTTPRequestHandler):
    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
        taken["batches"] += 1
        taken["events"] += len(json.loads(body)["events"])
        self.send_response(204)
        self.end_headers()

    def log_message(self, *args):
        pass


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    server = ThreadingHTTPServer(("127.0.0.1", int(sys.argv[1])), Sink)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    print(json.dumps(taken), flush=True)


if __name__ == "__main__":
    main()
