"""The client: configuration, the contract's payloads, masking, sampling, and the pipeline."""

from __future__ import annotations

import asyncio
import atexit
import datetime as _dt
import functools
import inspect
import json
import logging
import os
import time
import uuid
import weakref
from typing import Any, Callable, Dict, List, Mapping, Optional, Sequence, TypeVar, Union, cast

from ._plain import copy_plain, iso
from .dsn import ConfigError, parse_credential
from .errors import CellarError, FlushResult
from .pipeline import Encoded, Pipeline, PipelineOptions
from .redact import Redactor, map_content, resolve_redactors, truncation_marker
from .sampling import session_sampled
from .session import current_session_id
from .transport import Connection

logger = logging.getLogger("cellar")
logger.addHandler(logging.NullHandler())

F = TypeVar("F", bound=Callable[..., Any])
Timestamp = Union[float, int, str, _dt.datetime, None]
MaskHook = Callable[[str, Dict[str, Any]], Optional[Dict[str, Any]]]

MiB = 1024 * 1024
# The smallest per-string limit truncation goes down to before an item is given up as too large.
MIN_STRING_CHARS = 256


def _timestamp(value: Timestamp, default: float) -> str:
    if value is None:
        return iso(default)
    if isinstance(value, (int, float)):
        return iso(float(value))
    if isinstance(value, _dt.datetime):
        if value.tzinfo is None:
            raise ValueError("timestamp: a naive datetime has no zone; pass an aware one (timezone.utc)")
        return iso(value.timestamp())
    if isinstance(value, str):
        return value
    raise TypeError(f"timestamp: expected epoch seconds, an aware datetime or an ISO 8601 string, got {type(value).__name__}")


def _clean(text: str) -> str:
    # Postgres cannot store NUL: the server refuses it, so it is replaced before sending.
    return text.replace("\x00", "\ufffd") if "\x00" in text else text


class Client:
    """Sends traces and events to Cellar. Thread-safe; one per process is the usual setup.

    Configured by a server DSN alone (``Client("svc-ing-s-...")`` or ``CELLAR_DSN``), or by a
    telemetry key with ``endpoint`` and ``service``. See the README for every option.
    """

    def __init__(
        self,
        dsn: Optional[str] = None,
        *,
        key: Optional[str] = None,
        endpoint: Optional[str] = None,
        service: Optional[str] = None,
        environment: Optional[str] = None,
        sample_rate: float = 1.0,
        mask: Optional[MaskHook] = None,
        redact: Sequence[Union[str, Redactor]] = (),
        max_string_chars: int = 100_000,
        max_item_bytes: int = 3 * MiB,
        max_queue_items: int = 10_000,
        max_queue_bytes: int = 64 * MiB,
        max_batch_items: int = 100,
        max_batch_bytes: int = 1 * MiB,
        flush_interval: float = 1.0,
        max_retries: int = 10,
        backoff_base: float = 0.5,
        backoff_max: float = 30.0,
        timeout: float = 10.0,
        gzip: bool = True,
        serverless: bool = False,
        on_error: Optional[Callable[[CellarError], None]] = None,
        flush_at_exit: bool = True,
        shutdown_timeout: float = 5.0,
    ) -> None:
        if dsn is not None and key is not None:
            raise ConfigError("pass either dsn or key, not both")
        secret = dsn if dsn is not None else key
        if secret is None:
            secret = os.environ.get("CELLAR_DSN")
        if secret is None:
            raise ConfigError("dsn: not given; pass Client(dsn=...) or set CELLAR_DSN")
        cred = parse_credential(secret)
        self.endpoint = (endpoint or cred.endpoint or os.environ.get("CELLAR_ENDPOINT") or "").rstrip("/")
        if not self.endpoint:
            raise ConfigError(
                "endpoint: this key or legacy DSN does not carry the ingest URL; pass endpoint= or set CELLAR_ENDPOINT"
            )
        if cred.service and service and service != cred.service:
            raise ConfigError(f"service: {service!r} differs from the DSN's service {cred.service!r} (the server answers 403)")
        self.service: Optional[str] = service or cred.service or os.environ.get("CELLAR_SERVICE")
        if not self.service and cred.kind == "telemetry-key":
            raise ConfigError("service: a telemetry key needs service= (or CELLAR_SERVICE); a server DSN carries it")
        self.environment = environment or os.environ.get("CELLAR_ENVIRONMENT") or None
        if not 0.0 <= sample_rate <= 1.0:
            raise ConfigError("sample_rate: between 0 and 1")
        if max_batch_items < 1 or max_batch_items > 1000:
            raise ConfigError("max_batch_items: 1 to 1000 (the batch door's limit)")
        if max_string_chars < MIN_STRING_CHARS:
            raise ConfigError(f"max_string_chars: at least {MIN_STRING_CHARS}")
        self.sample_rate = float(sample_rate)
        self._mask = mask
        self._redactors: List[Redactor] = resolve_redactors(redact)
        self._max_string_chars = max_string_chars
        self._max_item_bytes = max_item_bytes
        self._on_error = on_error
        self._shutdown_timeout = shutdown_timeout
        self._sampled: Dict[str, bool] = {}
        self._pipeline = Pipeline(
            Connection(self.endpoint, cred.token, timeout, use_gzip=gzip),
            PipelineOptions(
                max_queue_items=max_queue_items,
                max_queue_bytes=max_queue_bytes,
                max_batch_items=max_batch_items,
                max_batch_bytes=max_batch_bytes,
                flush_interval=flush_interval,
                max_retries=max_retries,
                backoff_base=backoff_base,
                backoff_max=backoff_max,
                serverless=serverless,
                service_name=self.service,
            ),
            self._report,
        )
        self.serverless = serverless
        self._shut = False
        if flush_at_exit:
            _at_exit.add(self)

    # --- the contract's payloads -------------------------------------------------------------

    def trace(
        self,
        payload: Optional[Mapping[str, Any]] = None,
        *,
        request: Optional[Mapping[str, Any]] = None,
        responses: Optional[Sequence[Mapping[str, Any]]] = None,
        session_id: Optional[str] = None,
        start_time: Timestamp = None,
        end_time: Timestamp = None,
        environment: Optional[str] = None,
        **extra: Any,
    ) -> bool:
        """Queues one trace (the contract's trace payload). False when sampled out or dropped.

        Either a whole payload dict, or its parts: ``request`` ({model, messages}) and
        ``responses`` (1 or 2 chat.completion objects). ``provider``, ``service_name``,
        ``session_id`` (from ``cellar.session``), ``environment`` and times are filled in.
        """
        body: Dict[str, Any] = dict(payload) if payload is not None else {}
        if request is not None:
            body["request"] = request
        if responses is not None:
            body["responses"] = list(responses)
        body.update(extra)
        now = time.time()
        body.setdefault("provider", "openai")
        body["start_time"] = _timestamp(body.get("start_time", start_time), now)
        body["end_time"] = _timestamp(body.get("end_time", end_time), now)
        return self._submit("trace", body, session_id, environment)

    def event(
        self,
        name: str,
        *,
        session_id: Optional[str] = None,
        attributes: Optional[Mapping[str, Any]] = None,
        body: Optional[Mapping[str, Any]] = None,
        severity_number: Optional[int] = None,
        timestamp: Timestamp = None,
        trace_id: Optional[str] = None,
        environment: Optional[str] = None,
    ) -> bool:
        """Queues one event (the contract's event payload). False when sampled out or dropped."""
        payload: Dict[str, Any] = {"name": name, "timestamp": _timestamp(timestamp, time.time())}
        if attributes is not None:
            payload["attributes"] = dict(attributes)
        if body is not None:
            payload["body"] = dict(body)
        if severity_number is not None:
            payload["severity_number"] = severity_number
        if trace_id is not None:
            payload["trace_id"] = trace_id
        return self._submit("event", payload, session_id, environment)

    def _submit(self, kind: str, body: Dict[str, Any], session_id: Optional[str], environment: Optional[str]) -> bool:
        sid = session_id or body.get("session_id") or self.session_for_call()
        if not self.sampled(sid):
            return False
        body["session_id"] = sid
        if environment or self.environment:
            body.setdefault("environment", environment or self.environment)
        encoded = self.encode(kind, body)
        if encoded is None:
            return False
        return self._pipeline.put(encoded)

    # --- for the integrations (caller path: keep it cheap) -------------------------------------

    def session_for_call(self) -> str:
        """The current ``cellar.session`` id, else a fresh id: a call outside a session is its own."""
        return current_session_id() or f"auto-{uuid.uuid4().hex}"

    def sampled(self, session_id: str) -> bool:
        """True when the session is kept; a False is one item sampled out, counted in the ledger."""
        if self.sample_rate >= 1.0:
            return True
        known = self._sampled.get(session_id)
        if known is None:
            if len(self._sampled) > 10_000:
                self._sampled.clear()
            known = self._sampled[session_id] = session_sampled(session_id, self.sample_rate)
        if not known:
            self._pipeline.count_sampled_out()
        return known

    def capture(self, kind: str, build: Callable[[], Optional[Dict[str, Any]]]) -> bool:
        """Queues a payload built later on the sender thread (the integrations' path)."""
        if self._shut:
            return False
        return self._pipeline.put(_Deferred(self, kind, build))

    # --- payload processing --------------------------------------------------------------------

    def encode(self, kind: str, payload: Dict[str, Any]) -> Optional[Encoded]:
        """Service name, masking hook, redactors, truncation, JSON. None: nothing to send."""
        if self.service and "service_name" not in payload:
            payload["service_name"] = self.service
        if self._mask is not None:
            try:
                # The hook gets its own copy: payloads share the caller's unchanged dicts.
                masked = self._mask(kind, copy_plain(payload))
            except Exception as err:  # noqa: BLE001 - a failing hook drops the item, never the caller
                self._pipeline.count_dropped(1)
                self._report(CellarError("dropped", f"mask hook raised {err!r}; item dropped", count=1, cause=err))
                return None
            if masked is None:
                return None
            payload = masked
        limit = self._max_string_chars
        redactors = self._redactors
        while True:

            def text(value: str, limit: int = limit) -> str:
                value = _clean(value)
                for r in redactors:
                    value = r(value)
                return value if len(value) <= limit else value[:limit] + truncation_marker(len(value) - limit)

            cut = map_content(payload, text)
            try:
                data = json.dumps(cut, ensure_ascii=False, separators=(",", ":"), allow_nan=False, default=str)
            except ValueError as err:
                self._pipeline.count_refused(1)
                self._report(CellarError("refused", f"{kind} not sent: {err}", count=1))
                return None
            raw = data.encode("utf-8", "replace")
            if len(raw) <= self._max_item_bytes:
                return Encoded(kind, raw)
            if limit <= MIN_STRING_CHARS:
                self._pipeline.count_refused(1)
                self._report(
                    CellarError(
                        "refused",
                        f"{kind} not sent: {len(raw)} bytes after truncating every string to {limit} chars "
                        f"(max_item_bytes {self._max_item_bytes})",
                        count=1,
                    )
                )
                return None
            limit = max(MIN_STRING_CHARS, limit // 4)

    # --- reporting -----------------------------------------------------------------------------

    def _report(self, err: CellarError) -> None:
        level = {"retrying": logging.INFO, "internal": logging.ERROR}.get(err.kind, logging.WARNING)
        logger.log(level, "cellar: %s", err.message)
        hook = self._on_error
        if hook is not None:
            try:
                hook(err)
            except Exception:  # noqa: BLE001 - the user's hook must not break the sender
                logger.exception("cellar: on_error hook raised")

    def report_internal(self, what: str, err: BaseException) -> None:
        self._report(CellarError("internal", f"{what}: {err!r}", cause=err))

    # --- lifecycle -----------------------------------------------------------------------------

    def flush(self, timeout: Optional[float] = 30.0) -> FlushResult:
        """Sends everything queued so far; counts since the previous flush. Never raises."""
        try:
            return self._pipeline.flush(timeout)
        except Exception as err:  # noqa: BLE001
            self.report_internal("flush", err)
            return FlushResult(pending=self._pipeline.pending())

    def stats(self) -> FlushResult:
        """Counts since the client started (``pending``: items still queued)."""
        return self._pipeline.stats()

    def ledger(self) -> Dict[str, int]:
        """The ledger's counters this client reports inside its batches (docs/sdks.md "The ledger")."""
        return self._pipeline.ledger()

    def shutdown(self, timeout: Optional[float] = None) -> FlushResult:
        """Flushes (at most ``timeout``, default ``shutdown_timeout``) and stops; later items are dropped."""
        if self._shut:
            return FlushResult()
        self._shut = True
        _at_exit.discard(self)
        try:
            return self._pipeline.close(self._shutdown_timeout if timeout is None else timeout)
        except Exception as err:  # noqa: BLE001
            self.report_internal("shutdown", err)
            return FlushResult()

    def handler(self, fn: F) -> F:
        """Decorates a serverless handler: whatever it queued is sent before it returns."""
        if inspect.iscoroutinefunction(fn):

            @functools.wraps(fn)
            async def run_async(*args: Any, **kwargs: Any) -> Any:
                try:
                    return await fn(*args, **kwargs)
                finally:
                    await asyncio.get_running_loop().run_in_executor(None, self.flush)

            return cast(F, run_async)

        @functools.wraps(fn)
        def run(*args: Any, **kwargs: Any) -> Any:
            try:
                return fn(*args, **kwargs)
            finally:
                self.flush()

        return cast(F, run)


class _Deferred:
    """A capture: built, masked and encoded on the sender thread."""

    __slots__ = ("client", "kind", "build")

    def __init__(self, client: Client, kind: str, build: Callable[[], Optional[Dict[str, Any]]]) -> None:
        self.client = client
        self.kind = kind
        self.build = build

    def __call__(self) -> Optional[Encoded]:
        payload = self.build()
        if payload is None:
            return None
        if self.client.environment:
            payload.setdefault("environment", self.client.environment)
        return self.client.encode(self.kind, payload)


_at_exit: "weakref.WeakSet[Client]" = weakref.WeakSet()


@atexit.register
def _flush_at_exit() -> None:
    for client in list(_at_exit):
        client.shutdown()
