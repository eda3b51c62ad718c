"""Wrapping one provider method: the caller's path, kept to a few microseconds.

On the caller's thread: the start time, the original call (its result or exception untouched),
the session id, a shallow copy of the keyword arguments (and of the message list, which callers
commonly append to for the next turn) and one queue append. Turning provider objects into the
contract's payload happens later, on the sender thread.
"""

from __future__ import annotations

import inspect
import time
from typing import TYPE_CHECKING, Any, Callable, Dict, List, Optional, Tuple

from .._plain import iso
from ._observe import watch_stream

if TYPE_CHECKING:
    from ..client import Client

# (request kwargs, result or stream chunks, streamed?) -> (request, responses) of a trace, or None.
Mapper = Callable[[Dict[str, Any], Any, bool], Optional[Dict[str, Any]]]
ClientRef = Callable[[], "Optional[Client]"]

_DROP_KWARGS = frozenset({"extra_headers", "extra_query", "extra_body", "timeout"})


def snapshot_kwargs(kwargs: Dict[str, Any], list_keys: Tuple[str, ...]) -> Dict[str, Any]:
    """On the caller's path: a shallow copy, and copies of the lists callers append to later."""
    req = dict(kwargs)
    for key in list_keys:
        value = req.get(key)
        if type(value) is list:
            req[key] = list(value)
    return req


def request_of(req: Dict[str, Any]) -> Dict[str, Any]:
    """On the sender thread: the call's arguments without transport options and SDK sentinels."""
    return {k: v for k, v in req.items() if k not in _DROP_KWARGS and type(v).__name__ not in ("NotGiven", "Omit")}


class _Call:
    """One finished call waiting for the sender thread to turn it into a trace."""

    __slots__ = ("mapper", "req", "data", "streamed", "sid", "t0", "t1")

    def __init__(self, mapper: Mapper, req: Dict[str, Any], data: Any, streamed: bool, sid: str, t0: float, t1: float) -> None:
        self.mapper = mapper
        self.req = req
        self.data = data
        self.streamed = streamed
        self.sid = sid
        self.t0 = t0
        self.t1 = t1

    def __call__(self) -> Optional[Dict[str, Any]]:
        mapped = self.mapper(request_of(self.req), self.data, self.streamed)
        if mapped is None:
            return None
        payload: Dict[str, Any] = {
            "provider": "openai",
            "session_id": self.sid,
            "start_time": iso(self.t0),
            "end_time": iso(max(self.t1, self.t0)),
        }
        payload.update(mapped)
        return payload


# What a call's result is, decided once per result type: "stream", "awaitable" or "value".
_kinds: Dict[type, str] = {}


def kind_of(result: Any) -> str:
    t = type(result)
    kind = _kinds.get(t)
    if kind is None:
        if hasattr(t, "__next__") or hasattr(t, "__anext__") or inspect.isgenerator(result) or inspect.isasyncgen(result):
            kind = "stream"
        elif inspect.isawaitable(result):
            kind = "awaitable"
        else:
            kind = "value"
        if len(_kinds) < 1000:
            _kinds[t] = kind
    return kind


def _queue(
    cellar: "Client", mapper: Mapper, req: Dict[str, Any], data: Any, streamed: bool, sid: str, t0: float, t1: float
) -> None:
    cellar.capture("trace", _Call(mapper, req, data, streamed, sid, t0, t1))


def _after(
    client_ref: ClientRef,
    mapper: Mapper,
    list_keys: Tuple[str, ...],
    kwargs: Dict[str, Any],
    result: Any,
    t0: float,
    compact: Callable[[Any], Any],
) -> Any:
    """Notes a finished call (or watches its stream) and returns what the caller must get."""
    cellar = client_ref()
    if cellar is None:
        return result
    try:
        sid = cellar.session_for_call()
        if not cellar.sampled(sid):
            return result
        req = snapshot_kwargs(kwargs, list_keys)
        if kind_of(result) == "stream":

            def finish(chunks: List[Any], t1: float, error: Optional[BaseException]) -> None:
                if chunks:
                    _queue(cellar, mapper, req, chunks, True, sid, t0, t1)

            return watch_stream(result, finish, compact)
        _queue(cellar, mapper, req, result, False, sid, t0, time.time())
    except Exception as err:  # noqa: BLE001 - never fail the caller because of Cellar
        try:
            cellar.report_internal("recording a call", err)
        except Exception:  # noqa: BLE001
            pass
    return result


def _same(item: Any) -> Any:
    return item


def wrap_call(
    original: Callable[..., Any],
    client_ref: ClientRef,
    mapper: Mapper,
    list_keys: Tuple[str, ...],
    compact: Callable[[Any], Any] = _same,
) -> Callable[..., Any]:
    """A function that calls ``original`` and notes the call; sync or async like the original."""
    if inspect.iscoroutinefunction(original):

        async def wrapped_async(*args: Any, **kwargs: Any) -> Any:
            t0 = time.time()
            result = await original(*args, **kwargs)
            return _after(client_ref, mapper, list_keys, kwargs, result, t0, compact)

        return wrapped_async

    def wrapped(*args: Any, **kwargs: Any) -> Any:
        t0 = time.time()
        result = original(*args, **kwargs)
        if kind_of(result) == "awaitable":
            # An async client whose method is a plain function returning a coroutine.
            async def settle() -> Any:
                value = await result
                return _after(client_ref, mapper, list_keys, kwargs, value, t0, compact)

            return settle()
        return _after(client_ref, mapper, list_keys, kwargs, result, t0, compact)

    return wrapped
