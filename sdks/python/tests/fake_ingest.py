"""A local stand-in for the ingest host's batch door, for faults the real one cannot be made to show.

It answers as docs/sdks.md defines ``POST /raw/batch`` (per-item results, 429 with
Retry-After, 503...), following a script of answers, and records every request as received
(gunzipped, with its arrival time), so tests can check what the SDK sent and when.
"""

from __future__ import annotations

import gzip
import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Callable, Dict, List, Optional, Tuple

# A scripted answer: (status, headers, body) or a function of the parsed request giving one.
Reply = Tuple[int, Dict[str, str], Any]
Rule = Callable[[str, Any], Optional[Reply]]


def accept_all(path: str, body: Any) -> Reply:
    if path == "/raw/batch":
        items = body.get("items", [])
        return 200, {}, {"status": "success", "items": [{"status": "accepted"} for _ in items]}
    return 200, {}, {"status": "success"}


class Received:
    def __init__(self, path: str, headers: Dict[str, str], raw: bytes, body: Any, at: float) -> None:
        self.path = path
        self.headers = headers
        self.raw = raw
        self.body = body
        self.at = at

    @property
    def items(self) -> List[Dict[str, Any]]:
        return self.body.get("items", []) if isinstance(self.body, dict) else []


class FakeIngest:
    def __init__(self, keep: bool = True) -> None:
        """``keep=False``: answer without recording (benches: a growing record slows every gc pass)."""
        self.received: List[Received] = []
        self.script: List[Any] = []  # Reply or Rule, used once each, then accept_all
        self.default: Rule = accept_all
        self.lock = threading.Lock()
        outer = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            # Headers and body go out in two writes: without this, Nagle's algorithm and the
            # client's delayed ACK add 40 ms to every answer on a kept-alive connection.
            disable_nagle_algorithm = True

            def log_message(self, *args: Any) -> None:
                pass

            def do_POST(self) -> None:  # noqa: N802
                length = int(self.headers.get("Content-Length", "0"))
                raw = self.rfile.read(length)
                data = gzip.decompress(raw) if self.headers.get("Content-Encoding") == "gzip" else raw
                try:
                    body = json.loads(data)
                except ValueError:
                    body = None
                rec = Received(self.path, {k.lower(): v for k, v in self.headers.items()}, raw, body, time.monotonic())
                with outer.lock:
                    if keep:
                        outer.received.append(rec)
                    step = outer.script.pop(0) if outer.script else outer.default
                reply = step(self.path, body) if callable(step) else step
                if reply is None:
                    reply = accept_all(self.path, body)
                status, headers, payload = reply
                out = json.dumps(payload).encode()
                self.send_response(status)
                for k, v in headers.items():
                    self.send_header(k, v)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(out)))
                self.end_headers()
                self.wfile.write(out)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}"

    def items(self, kind: Optional[str] = None) -> List[Dict[str, Any]]:
        """Bodies of every item received through the batch door (and single doors), in order."""
        out: List[Dict[str, Any]] = []
        with self.lock:
            for r in self.received:
                if r.path == "/raw/batch":
                    out.extend(i["body"] for i in r.items if kind is None or i["type"] == kind)
                elif kind is None or r.path == {"trace": "/raw/traces", "event": "/raw/events"}[kind]:
                    out.append(r.body)
        return out

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()
