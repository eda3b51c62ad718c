"""One HTTP connection to the ingest host (http.client, kept alive), and what an answer means."""

from __future__ import annotations

import email.utils
import gzip
import http.client
import json
import ssl
import time
import urllib.parse
from dataclasses import dataclass
from typing import Any, Dict, Optional

from ._version import __version__

# Below this size gzip cannot save a round trip's worth of bytes; above it, JSON shrinks 5-10x.
GZIP_MIN_BYTES = 1024
MAX_RETRY_AFTER_SECONDS = 600.0


@dataclass
class Answer:
    """An HTTP answer (``status`` 0 = no answer: a network error, in ``error``)."""

    status: int
    headers: Dict[str, str]
    body: bytes
    error: Optional[BaseException] = None

    @property
    def retryable(self) -> bool:
        return self.status == 0 or self.status in (408, 429) or self.status >= 500

    def json(self) -> Any:
        try:
            return json.loads(self.body.decode("utf-8"))
        except (ValueError, UnicodeDecodeError):
            return None

    def error_text(self) -> str:
        if self.error is not None:
            return f"{type(self.error).__name__}: {self.error}"
        data = self.json()
        if isinstance(data, dict) and isinstance(data.get("error"), str):
            return f"HTTP {self.status}: {data['error']}"
        return f"HTTP {self.status}"

    def retry_after(self) -> Optional[float]:
        """Seconds the server asked to wait (``Retry-After``: seconds or an HTTP date), capped."""
        value = self.headers.get("retry-after")
        if not value:
            return None
        value = value.strip()
        try:
            seconds = float(value)
        except ValueError:
            try:
                when = email.utils.parsedate_to_datetime(value)
            except (TypeError, ValueError):
                return None
            if when is None:
                return None
            seconds = when.timestamp() - time.time()
        if seconds != seconds:  # NaN
            return None
        return min(max(seconds, 0.0), MAX_RETRY_AFTER_SECONDS)


class Connection:
    """Posts JSON to one ingest base URL; reconnects after any failure. Not thread-safe: one owner."""

    def __init__(self, endpoint: str, token: str, timeout: float, use_gzip: bool = True) -> None:
        parsed = urllib.parse.urlsplit(endpoint)
        if parsed.scheme not in ("http", "https") or not parsed.hostname:
            raise ValueError(f"endpoint: not an http(s) URL: {endpoint!r}")
        self._https = parsed.scheme == "https"
        self._host = parsed.hostname
        self._port = parsed.port
        self._base_path = parsed.path.rstrip("/")
        self._token = token
        self._timeout = timeout
        self._gzip = use_gzip
        self._conn: Optional[http.client.HTTPConnection] = None

    def close(self) -> None:
        conn, self._conn = self._conn, None
        if conn is not None:
            try:
                conn.close()
            except Exception:  # noqa: BLE001 - closing a broken socket must not raise
                pass

    def forget(self) -> None:
        """Drops the connection without closing it (after fork: the socket is the parent's)."""
        self._conn = None

    def _connection(self) -> http.client.HTTPConnection:
        if self._conn is None:
            if self._https:
                self._conn = http.client.HTTPSConnection(
                    self._host, self._port, timeout=self._timeout, context=ssl.create_default_context()
                )
            else:
                self._conn = http.client.HTTPConnection(self._host, self._port, timeout=self._timeout)
        return self._conn

    def post(self, path: str, body: bytes) -> Answer:
        headers = {
            "Authorization": f"Bearer {self._token}",
            "Content-Type": "application/json",
            "User-Agent": f"cellar-python/{__version__}",
        }
        if self._gzip and len(body) >= GZIP_MIN_BYTES:
            packed = gzip.compress(body, compresslevel=6, mtime=0)
            if len(packed) < len(body) * 0.9:
                body = packed
                headers["Content-Encoding"] = "gzip"
        headers["Content-Length"] = str(len(body))
        for attempt in (0, 1):
            conn = self._connection()
            try:
                conn.request("POST", self._base_path + path, body=body, headers=headers)
                res = conn.getresponse()
                data = res.read()
                answer = Answer(res.status, {k.lower(): v for k, v in res.getheaders()}, data)
                if res.will_close:
                    self.close()
                return answer
            except (http.client.RemoteDisconnected, BrokenPipeError, ConnectionResetError) as err:
                # A kept-alive connection the server closed while idle: once more on a fresh one.
                self.close()
                if attempt == 1:
                    return Answer(0, {}, b"", err)
            except Exception as err:  # noqa: BLE001 - every network failure is an answer, not a raise
                self.close()
                return Answer(0, {}, b"", err)
        return Answer(0, {}, b"", RuntimeError("unreachable"))
