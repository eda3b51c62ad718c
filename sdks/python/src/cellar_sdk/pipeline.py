"""The queue between the caller and the ingest host, and the thread that empties it.

Callers append entries (a finished payload, or a capture the worker turns into one) to a
bounded deque under a lock and return; nothing else happens on their thread. The worker (a
daemon thread, started on the first entry, restarted in a forked child) encodes entries,
groups them into batches bounded by count and bytes, posts them to ``/raw/batch`` and retries
what may be retried. Every accepted entry ends exactly once as sent, refused or dropped, in
order, which is what ``flush()`` waits for.
"""

from __future__ import annotations

import collections
import json
import logging
import os
import random
import threading
import time
import uuid
import weakref
from dataclasses import dataclass
from typing import Callable, Deque, List, Optional, Union

from .errors import CellarError, FlushResult
from .transport import Answer, Connection

logger = logging.getLogger("cellar")

BATCH_PATH = "/raw/batch"
SINGLE_PATHS = {"trace": "/raw/traces", "event": "/raw/events"}
# After a 404 from /raw/batch (an ingest host older than the batch door) the single doors are
# used; the batch door is tried again after this long.
BATCH_REPROBE_SECONDS = 600.0


@dataclass
class Encoded:
    """A payload ready to send: its kind (``trace`` / ``event``) and its JSON bytes."""

    kind: str
    data: bytes


# A capture turns into an Encoded on the worker (None: nothing to send, e.g. masked out).
Capture = Callable[[], Optional[Encoded]]
Entry = Union[Encoded, Capture]


@dataclass
class PipelineOptions:
    max_queue_items: int = 10_000
    max_queue_bytes: int = 64 * 1024 * 1024
    max_batch_items: int = 100
    max_batch_bytes: int = 1024 * 1024
    flush_interval: float = 1.0
    max_retries: int = 10
    backoff_base: float = 0.5
    backoff_max: float = 30.0
    serverless: bool = False
    # The service named in the ledger report (a DSN's own is checked against it by the host).
    service_name: Optional[str] = None


# The ledger's counters (docs/sdks.md "The ledger"): cumulative since the client was made.
LEDGER_COUNTERS = ("requested", "queue_full", "retries_exhausted", "refused", "sampled_out")


class Pipeline:
    def __init__(
        self,
        connection: Connection,
        options: PipelineOptions,
        report: Callable[[CellarError], None],
    ) -> None:
        self._conn = connection
        self._opts = options
        self._report = report
        self._reset_state()
        self._closed = False
        _live.add(self)

    # --- state (recreated in a forked child) ---------------------------------------------------

    def _reset_state(self) -> None:
        self._lock = threading.Lock()
        self._wake = threading.Condition(self._lock)
        self._done = threading.Condition(threading.Lock())
        self._send_lock = threading.Lock()
        self._queue: Deque[Entry] = collections.deque()
        self._queued_bytes = 0  # bytes of Encoded entries in _queue
        self._ready: Deque[Encoded] = collections.deque()  # worker-owned, encoded, in order
        self._ready_bytes = 0
        self._accepted = 0  # entries taken into the queue, ever
        self._finished = 0  # entries that ended (sent, refused, dropped, skipped), ever
        self._flush_wanted = False
        self._stopping = False
        self._worker: Optional[threading.Thread] = None
        self._pid = os.getpid()
        self._batch_door = True
        self._batch_door_probe_at = 0.0
        self._batch_cap = self._opts.max_batch_items  # lowered by a 413 (the host's burst or body limit)
        self._stats = {"sent": 0, "refused": 0, "dropped": 0, "retried": 0}
        self._since_flush = dict(self._stats)
        self._unreported_drops = 0
        # A forked child is a new instance with its own counters: the parent's are the parent's.
        self._ledger = {name: 0 for name in LEDGER_COUNTERS}
        self._ledger_instance = uuid.uuid4().hex
        self._ledger_seq = 0

    def _before_fork(self) -> None:
        self._lock.acquire()

    def _after_fork_parent(self) -> None:
        self._lock.release()

    def _after_fork_child(self) -> None:
        # The child starts empty with its own lock and (lazily) its own thread; the parent keeps
        # and sends its queue, so nothing is lost and nothing is sent twice.
        self._conn.forget()
        closed = self._closed
        self._reset_state()
        self._closed = closed

    # --- caller side ------------------------------------------------------------------------

    def put(self, entry: Entry) -> bool:
        """Queues an entry; False when it was dropped (queue full or closed). Cheap: no I/O."""
        size = len(entry.data) if isinstance(entry, Encoded) else 0
        with self._lock:
            self._ledger["requested"] += 1
            if (
                self._closed
                or len(self._queue) + len(self._ready) >= self._opts.max_queue_items
                or self._queued_bytes + self._ready_bytes + size > self._opts.max_queue_bytes
            ):
                # Drop the newest: a running transcript keeps its beginning.
                self._stats["dropped"] += 1
                self._ledger["queue_full"] += 1
                self._unreported_drops += 1
                return False
            self._queue.append(entry)
            self._queued_bytes += size
            self._accepted += 1
            if len(self._queue) == self._opts.max_batch_items and self._worker is not None:
                self._wake.notify()  # once per batch's worth: the worker sends without waiting
        if self._worker is None and not self._opts.serverless:
            self._start_worker()
        return True

    def _start_worker(self) -> None:
        with self._lock:
            if self._worker is not None or self._closed:
                return
            self._worker = threading.Thread(target=self._run, name="cellar-sender", daemon=True)
            try:
                self._worker.start()
            except RuntimeError:
                # "can't create new thread at interpreter shutdown": flush() sends from the caller.
                self._worker = None

    def count_dropped(self, n: int) -> None:
        """Counts items lost before they were queued (e.g. a failing masking hook)."""
        with self._lock:
            self._stats["dropped"] += n
            self._ledger["requested"] += n
            self._ledger["refused"] += n

    def count_refused(self, n: int) -> None:
        """Counts items refused on this side (too large even after truncation, not JSON)."""
        with self._lock:
            self._stats["refused"] += n
            self._ledger["requested"] += n
            self._ledger["refused"] += n

    def count_sampled_out(self, n: int = 1) -> None:
        """Counts items not kept because their session is sampled out (the ledger only)."""
        with self._lock:
            self._ledger["requested"] += n
            self._ledger["sampled_out"] += n

    def ledger(self) -> dict:
        """The ledger's counters so far: what the next batch reports."""
        with self._lock:
            return dict(self._ledger)

    def _ledger_report(self) -> bytes:
        """The batch envelope's ``ledger``: counts only, about 200 bytes, a new seq per request."""
        with self._lock:
            self._ledger_seq += 1
            report = {"instance": self._ledger_instance, "seq": self._ledger_seq, "counts": dict(self._ledger)}
        if self._opts.service_name:
            report["service_name"] = self._opts.service_name
        return json.dumps(report, separators=(",", ":")).encode("ascii")

    def pending(self) -> int:
        return self._accepted - self._finished

    def stats(self) -> FlushResult:
        return FlushResult(pending=self.pending(), **self._stats)

    def flush(self, timeout: Optional[float] = None) -> FlushResult:
        """Waits until every entry queued before the call has ended; counts since the last flush."""
        deadline = None if timeout is None else time.monotonic() + timeout
        target = self._accepted
        worker = self._worker
        if worker is not None and worker.is_alive() and threading.current_thread() is not worker:
            with self._lock:
                self._flush_wanted = True
                self._wake.notify()
            with self._done:
                while self._finished < target:
                    left = None if deadline is None else deadline - time.monotonic()
                    if left is not None and left <= 0:
                        break
                    self._done.wait(left if left is not None else 1.0)
        else:
            self._drain(deadline, until=target)
        self._report_drops()
        now = dict(self._stats)
        delta = {k: now[k] - self._since_flush[k] for k in now}
        self._since_flush = now
        return FlushResult(pending=max(0, target - self._finished), **delta)

    def close(self, timeout: Optional[float]) -> FlushResult:
        """Flushes for at most ``timeout`` seconds, then stops; what is still queued is dropped."""
        result = self.flush(timeout)
        with self._lock:
            self._closed = True
            self._stopping = True
            self._wake.notify()
            left = list(self._queue)
            self._queue.clear()
            self._queued_bytes = 0
        worker = self._worker
        if worker is not None and worker is not threading.current_thread():
            worker.join(timeout=2.0)
        lost = len(left)
        if worker is None or not worker.is_alive():
            # The worker is gone: what it had encoded but not sent is lost too.
            lost += len(self._ready)
            self._ready.clear()
            self._ready_bytes = 0
        if lost:
            self._end(lost, "dropped", "queue_full")
            self._report(CellarError("dropped", f"{lost} items still queued at shutdown", count=lost))
        self._conn.close()
        return FlushResult(
            sent=result.sent,
            refused=result.refused,
            dropped=result.dropped + lost,
            retried=result.retried,
            pending=0,
        )

    # --- worker side ------------------------------------------------------------------------

    def _run(self) -> None:
        while True:
            with self._lock:
                if not self._stopping and not self._flush_wanted and len(self._queue) < self._opts.max_batch_items:
                    self._wake.wait(self._opts.flush_interval)
                if self._stopping:
                    return
                self._flush_wanted = False
            try:
                self._drain(None)
            except Exception as err:  # noqa: BLE001 - the worker must survive anything
                self._report(CellarError("internal", f"sender: {err!r}", cause=err))
            self._report_drops()

    def _report_drops(self) -> None:
        with self._lock:
            n, self._unreported_drops = self._unreported_drops, 0
        if n:
            self._report(CellarError("dropped", f"{n} items dropped: the queue was full", count=n))

    def _take(self, n: int) -> List[Entry]:
        with self._lock:
            taken: List[Entry] = []
            while self._queue and len(taken) < n:
                entry = self._queue.popleft()
                if isinstance(entry, Encoded):
                    self._queued_bytes -= len(entry.data)
                taken.append(entry)
        return taken

    def _encode_pending(self) -> None:
        """Encodes queued entries until a batch's worth is ready (one batch at a time: bounded work)."""
        for entry in self._take(max(0, self._opts.max_batch_items - len(self._ready))):
            encoded: Optional[Encoded]
            if isinstance(entry, Encoded):
                encoded = entry
            else:
                try:
                    encoded = entry()
                except Exception as err:  # noqa: BLE001 - a bad capture costs that item only
                    self._end(1, "dropped", "refused")
                    self._report(CellarError("internal", f"could not build a payload: {err!r}", count=1, cause=err))
                    continue
                if encoded is None:
                    # Masked out by the application, or counted refused while encoding: not requested twice.
                    with self._lock:
                        self._ledger["requested"] -= 1
                    self._end(1, None)
                    continue
                if self._ready_bytes + len(encoded.data) > self._opts.max_queue_bytes:
                    self._end(1, "dropped", "queue_full")
                    with self._lock:
                        self._unreported_drops += 1
                    continue
            self._ready.append(encoded)
            self._ready_bytes += len(encoded.data)

    def _end(self, n: int, outcome: Optional[str], reason: Optional[str] = None) -> None:
        if n <= 0:
            return
        if outcome is not None:
            with self._lock:  # callers count drops under the same lock
                self._stats[outcome] += n
                if reason is not None or outcome == "refused":
                    self._ledger[reason or "refused"] += n
        with self._done:
            self._finished += n
            self._done.notify_all()

    def _drain(self, deadline: Optional[float], until: Optional[int] = None) -> None:
        """Sends everything queued (serverless flush: until ``until`` entries ended or the deadline)."""
        with self._send_lock:
            while True:
                self._encode_pending()
                if not self._ready or self._stopping:
                    return
                if until is not None and self._finished >= until:
                    return
                if deadline is not None and time.monotonic() >= deadline:
                    return
                batch = self._next_batch()
                unsent = self._deliver(batch, deadline)
                if unsent:
                    # Deadline passed while retrying: keep them, in order, for the next flush.
                    for item in reversed(unsent):
                        self._ready.appendleft(item)
                        self._ready_bytes += len(item.data)
                    return

    def _next_batch(self) -> List[Encoded]:
        batch: List[Encoded] = []
        size = 0
        while self._ready and len(batch) < self._batch_cap:
            item = self._ready[0]
            if batch and size + len(item.data) > self._opts.max_batch_bytes:
                break
            self._ready.popleft()
            self._ready_bytes -= len(item.data)
            batch.append(item)
            size += len(item.data) + 30
        return batch

    def _wait(self, seconds: float, deadline: Optional[float]) -> bool:
        """Sleeps (woken early by shutdown); False when the deadline comes first."""
        if deadline is not None and time.monotonic() + seconds > deadline:
            return False
        with self._lock:
            if not self._stopping:
                self._wake.wait(seconds)
        return not self._stopping

    def _backoff(self, attempt: int) -> float:
        step = min(self._opts.backoff_max, self._opts.backoff_base * float(2 ** (attempt - 1)))
        return step * (0.5 + random.random() / 2)  # equal jitter: spreads clients, never zero

    def _deliver(self, batch: List[Encoded], deadline: Optional[float]) -> List[Encoded]:
        """Sends one batch until it has an answer per item; returns what is left at the deadline."""
        attempt = 0
        # Built once: a retry sends the same bytes (its ledger report too: the host counts it once).
        body: Optional[bytes] = None
        while batch:
            if not self._batch_door and time.monotonic() >= self._batch_door_probe_at:
                self._batch_door = True
            if self._batch_door:
                if body is None:
                    body = batch_body(batch, self._ledger_report())
                answer = self._conn.post(BATCH_PATH, body)
                if answer.status == 404:
                    logger.info("cellar: %s answered 404; using the single doors", BATCH_PATH)
                    self._batch_door = False
                    self._batch_door_probe_at = time.monotonic() + BATCH_REPROBE_SECONDS
                    continue
                if not answer.retryable:
                    self._settle_batch(batch, answer)
                    return []
            else:
                answer = self._conn.post(SINGLE_PATHS[batch[0].kind], batch[0].data)
                if not answer.retryable:
                    self._settle_single(batch[0], answer)
                    batch = batch[1:]
                    attempt = 0
                    continue
            attempt += 1
            if attempt > self._opts.max_retries:
                self._end(len(batch), "dropped", "retries_exhausted")
                self._report(
                    CellarError(
                        "dropped",
                        f"{len(batch)} items dropped after {self._opts.max_retries} retries: {answer.error_text()}",
                        count=len(batch),
                        status=answer.status or None,
                    )
                )
                return []
            delay = self._backoff(attempt)
            asked = answer.retry_after()
            if asked is not None:
                delay = max(delay, asked)
            self._report(
                CellarError(
                    "retrying",
                    f"send failed ({answer.error_text()}); retry {attempt} in {delay:.2f}s",
                    count=len(batch),
                    status=answer.status or None,
                    retry_in=delay,
                )
            )
            if not self._wait(delay, deadline):
                return batch
            with self._lock:
                self._stats["retried"] += len(batch) if self._batch_door else 1
        return []

    def _settle_batch(self, batch: List[Encoded], answer: Answer) -> None:
        data = answer.json() if answer.status == 200 else None
        items = data.get("items") if isinstance(data, dict) else None
        if answer.status == 200 and isinstance(items, list) and len(items) == len(batch):
            refused = [(i, it) for i, it in enumerate(items) if not (isinstance(it, dict) and it.get("status") == "accepted")]
            self._end(len(batch) - len(refused), "sent")
            if refused:
                self._end(len(refused), "refused")
                first = refused[0][1]
                why = first.get("error") if isinstance(first, dict) else None
                self._report(
                    CellarError(
                        "refused",
                        f"{len(refused)} of {len(batch)} items refused; items[{refused[0][0]}] ({batch[refused[0][0]].kind}): {why}",
                        count=len(refused),
                        status=200,
                    )
                )
            return
        if answer.status == 413 and len(batch) > 1:
            half = len(batch) // 2
            # Later batches start at the size that may fit, not at the one that did not.
            self._batch_cap = max(1, min(self._batch_cap, half))
            for part in (batch[:half], batch[half:]):
                self._deliver(part, None)
            return
        self._end(len(batch), "refused")
        self._report(
            CellarError(
                "rejected",
                f"{len(batch)} items refused: {answer.error_text()}",
                count=len(batch),
                status=answer.status,
            )
        )

    def _settle_single(self, item: Encoded, answer: Answer) -> None:
        if 200 <= answer.status < 300:
            self._end(1, "sent")
            return
        self._end(1, "refused")
        self._report(CellarError("refused", f"1 {item.kind} refused: {answer.error_text()}", count=1, status=answer.status))


def batch_body(batch: List[Encoded], ledger: Optional[bytes] = None) -> bytes:
    """``{"items": [{"type": ..., "body": ...}], "ledger": ...}`` from the bodies' bytes (no re-encoding)."""
    parts = [b'{"type":"' + item.kind.encode("ascii") + b'","body":' + item.data + b"}" for item in batch]
    tail = b',"ledger":' + ledger if ledger is not None else b""
    return b'{"items":[' + b",".join(parts) + b"]" + tail + b"}"


# --- fork and exit -----------------------------------------------------------------------------

_live: "weakref.WeakSet[Pipeline]" = weakref.WeakSet()


def _each(method: str) -> Callable[[], None]:
    def run() -> None:
        for p in list(_live):
            try:
                getattr(p, method)()
            except Exception:  # noqa: BLE001 - fork handlers must never raise
                pass

    return run


if hasattr(os, "register_at_fork"):
    os.register_at_fork(
        before=_each("_before_fork"),
        after_in_parent=_each("_after_fork_parent"),
        after_in_child=_each("_after_fork_child"),
    )

