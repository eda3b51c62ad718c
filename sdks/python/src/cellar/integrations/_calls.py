"""Wrapping one provider method: the caller's path, kept to a few microseconds.

On the caller's thread: the start time, the original call (its result or exception untouched),
the session id, a shallow copy of the keyword arguments (and of the message list, which callers
commonly append to for the next turn) and one queue append. Turning provider objects into the
contract's payload happens later, on the sender thread.
"""

from __future__ import annotations

import inspect
import time
from typing import TYPE_CHECKING, Any, Callable, Dict, List, Optional

from .._plain import iso
from ._observe import watch_stream

if TYPE_CHECKING:
    from ..client import Client

# (request kwargs, result or stream chunks, streamed?) -> (request, responses) of a trace, or None.
Mapper = Callable[[Dict[str, Any], Any, bool], Optional[Dict[str, Any]]]
ClientRef = Callable[[], "Optional[Client]"]

_DROP_KWARGS = ("extra_headers", "extra_query", "extra_body", "timeout")


def snapshot_kwargs(kwargs: Dict[str, Any], list_keys: tuple) -> Dict[str, Any]:
    req = {k: v for k, v in kwargs.items() if k not in _DROP_KWARGS and type(v).__name__ not in ("NotGiven", "Omit")}
    for key in list_keys:
        value = req.get(key)
        if isinstance(value, list):
            req[key] = list(value)
    return req


def _queue(
    cellar: "Client", mapper: Mapper, req: Dict[str, Any], data: Any, streamed: bool, sid: str, t0: float, t1: float
) -> None:
    def build() -> Optional[Dict[str, Any]]:
        mapped = mapper(req, data, streamed)
        if mapped is None:
            return None
        payload: Dict[str, Any] = {
            "provider": "openai",
            "session_id": sid,
            "start_time": iso(t0),
            "end_time": iso(max(t1, t0)),
        }
        payload.update(mapped)
        return payload

    cellar.capture("trace", build)


def _after(
    client_ref: ClientRef, mapper: Mapper, list_keys: tuple, kwargs: Dict[str, Any], result: Any, t0: float
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
        if kwargs.get("stream") is True or _is_stream(result):

            def finish(chunks: List[Any], t1: float, error: Optional[BaseException]) -> None:
                if chunks:
                    _queue(cellar, mapper, req, chunks, True, sid, t0, t1)

            return watch_stream(result, finish)
        _queue(cellar, mapper, req, result, False, sid, t0, time.time())
    except Exception as err:  # noqa: BLE001 - never fail the caller because of Cellar
        try:
            cellar.report_internal("recording a call", err)
        except Exception:  # noqa: BLE001
            pass
    return result


def _is_stream(result: Any) -> bool:
    # Streams iterate; completed responses (pydantic models) do not define __next__/__anext__.
    return hasattr(result, "__next__") or hasattr(result, "__anext__") or inspect.isgenerator(result)


def wrap_call(original: Callable[..., Any], client_ref: ClientRef, mapper: Mapper, list_keys: tuple) -> Callable[..., Any]:
    """A function that calls ``original`` and notes the call; sync or async like the original."""
    if inspect.iscoroutinefunction(original):

        async def wrapped_async(*args: Any, **kwargs: Any) -> Any:
            t0 = time.time()
            result = await original(*args, **kwargs)
            return _after(client_ref, mapper, list_keys, kwargs, result, t0)

        return wrapped_async

    def wrapped(*args: Any, **kwargs: Any) -> Any:
        t0 = time.time()
        result = original(*args, **kwargs)
        if inspect.isawaitable(result) and not _is_stream(result):
            # An async client whose method is a plain function returning a coroutine.
            async def settle() -> Any:
                value = await result
                return _after(client_ref, mapper, list_keys, kwargs, value, t0)

            return settle()
        return _after(client_ref, mapper, list_keys, kwargs, result, t0)

    return wrapped
