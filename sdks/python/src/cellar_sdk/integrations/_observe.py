"""Watching a provider call without changing it.

A wrapped method calls the original with the same arguments and returns its result: the same
object. Exceptions are never caught on the way out. For a stream, the object the client
returned is kept too: its class is swapped for a subclass that notes each chunk (a list
append, the only work on the caller's path) and hands the chunks to Cellar when the stream
ends, is closed or leaves its ``with`` block; ``isinstance`` checks and every attribute behave
as before. An object whose class cannot be swapped is returned inside a transparent proxy.
"""

from __future__ import annotations

import functools
import inspect
import threading
import time
from contextlib import contextmanager
from typing import Any, Callable, Dict, Iterator, List, Optional

# Called once per finished stream: (chunks, end time, error or None).
Finish = Callable[[List[Any], float, Optional[BaseException]], None]


def _same(item: Any) -> Any:
    return item


class StreamWatch:
    """The chunks of one stream so far. ``compact`` may turn a chunk into a small tuple of strings
    (a text delta): kept chunk objects are traced by the garbage collector until the sender has
    built the trace, strings are not."""

    __slots__ = ("chunks", "compact", "_finish", "_done")

    def __init__(self, finish: Finish, compact: Callable[[Any], Any] = _same) -> None:
        self.chunks: List[Any] = []
        self.compact = compact
        self._finish = finish
        self._done = False

    def add(self, item: Any) -> None:
        kept = self.compact(item)
        if kept is not None:  # None: a chunk the trace does not need
            self.chunks.append(kept)

    def end(self, error: Optional[BaseException] = None) -> None:
        if self._done:
            return
        self._done = True
        try:
            self._finish(self.chunks, time.time(), error)
        except Exception:  # noqa: BLE001 - Cellar never breaks the caller's stream
            pass


_WATCH = "_cellar_watch"
_classes: Dict[type, type] = {}
_classes_lock = threading.Lock()


def _watch_of(obj: Any) -> Optional[StreamWatch]:
    try:
        watch: Optional[StreamWatch] = object.__getattribute__(obj, _WATCH)
        return watch
    except AttributeError:
        return None


@contextmanager
def _ending(watch: StreamWatch) -> Iterator[None]:
    """Ends the watch with the stream: at its end, on its error, or when the caller stops early."""
    try:
        yield
    except BaseException as err:
        watch.end(err if not isinstance(err, GeneratorExit) else None)
        raise
    watch.end()


def _watched_iter(inner: Any, watch: StreamWatch) -> Any:
    with _ending(watch):
        for item in inner:
            watch.add(item)
            yield item


async def _watched_aiter(inner: Any, watch: StreamWatch) -> Any:
    with _ending(watch):
        async for item in inner:
            watch.add(item)
            yield item


def _stepped(self: Any, item: Any) -> Any:
    """A chunk came: noted."""
    watch = _watch_of(self)
    if watch:
        watch.add(item)
    return item


def _step_failed(self: Any, err: BaseException, stop: type) -> None:
    """The stream ended (``stop``: its normal end) or broke."""
    watch = _watch_of(self)
    if watch:
        watch.end(None if isinstance(err, stop) else err)


def _left(self: Any, error: Optional[BaseException]) -> None:
    """Closed, or out of its ``with`` block."""
    watch = _watch_of(self)
    if watch:
        watch.end(error)


def _exit_error(exc: Any) -> Optional[BaseException]:
    return exc[1] if len(exc) > 1 and isinstance(exc[1], BaseException) else None


def _no_error(_: Any) -> None:
    return None


# Each kind of method is wrapped by one factory: the noting (_stepped, _step_failed, _left) is
# written once, and only the call (plain or awaited) differs between the sync and async twins.


def _next(step: Callable[..., Any], stop: type) -> Callable[..., Any]:
    def __next__(self: Any) -> Any:  # noqa: N807
        try:
            item = step(self)
        except BaseException as err:
            _step_failed(self, err, stop)
            raise
        return _stepped(self, item)

    return __next__


def _anext(step: Callable[..., Any], stop: type) -> Callable[..., Any]:
    async def __anext__(self: Any) -> Any:  # noqa: N807
        try:
            item = await step(self)
        except BaseException as err:
            _step_failed(self, err, stop)
            raise
        return _stepped(self, item)

    return __anext__


def _iterate(start: Callable[..., Any], watched: Callable[[Any, StreamWatch], Any]) -> Callable[..., Any]:
    """``__iter__`` and ``__aiter__`` alike (both are plain calls)."""

    def __iter__(self: Any) -> Any:  # noqa: N807
        inner = start(self)
        watch = _watch_of(self)
        if inner is self or watch is None:
            return inner  # our __next__ / __anext__ notes the chunks
        return watched(inner, watch)

    return __iter__


def _leave(method: Callable[..., Any], error: Callable[[Any], Optional[BaseException]]) -> Callable[..., Any]:
    def leave(self: Any, *a: Any, **k: Any) -> Any:
        try:
            return method(self, *a, **k)
        finally:
            _left(self, error(a))

    return leave


def _aleave(method: Callable[..., Any], error: Callable[[Any], Optional[BaseException]]) -> Callable[..., Any]:
    async def leave(self: Any, *a: Any, **k: Any) -> Any:
        try:
            return await method(self, *a, **k)
        finally:
            _left(self, error(a))

    return leave


# The methods a stream class may have, each with its wrapper.
_WRAPPERS: List[Any] = [
    ("__next__", lambda m: _next(m, StopIteration)),
    ("__anext__", lambda m: _anext(m, StopAsyncIteration)),
    ("__iter__", lambda m: _iterate(m, _watched_iter)),
    ("__aiter__", lambda m: _iterate(m, _watched_aiter)),
    ("close", lambda m: (_aleave if inspect.iscoroutinefunction(m) else _leave)(m, _no_error)),
    ("__exit__", lambda m: _leave(m, _exit_error)),
    ("__aexit__", lambda m: _aleave(m, _exit_error)),
]


def _subclass(base: type) -> type:
    """``base`` with iteration, close and context exit noted; made once per provider class."""
    with _classes_lock:
        known = _classes.get(base)
        if known is not None:
            return known
        ns: Dict[str, Any] = {"__module__": base.__module__, "__qualname__": base.__qualname__}
        for name, wrap in _WRAPPERS:
            if hasattr(base, name):
                ns[name] = wrap(getattr(base, name))
        sub = type(base.__name__, (base,), ns)
        _classes[base] = sub
        return sub


class _Proxy:
    """Last resort for objects whose class cannot be swapped: forwards everything."""

    def __init__(self, inner: Any, watch: StreamWatch) -> None:
        object.__setattr__(self, "_inner", inner)
        object.__setattr__(self, _WATCH, watch)

    def __getattr__(self, name: str) -> Any:
        return getattr(object.__getattribute__(self, "_inner"), name)

    def __iter__(self) -> Any:
        return _watched_iter(object.__getattribute__(self, "_inner"), _watch_of(self))  # type: ignore[arg-type]

    def __aiter__(self) -> Any:
        return _watched_aiter(object.__getattribute__(self, "_inner"), _watch_of(self))  # type: ignore[arg-type]

    def __enter__(self) -> Any:
        object.__getattribute__(self, "_inner").__enter__()
        return self

    def __exit__(self, *exc: Any) -> Any:
        try:
            return object.__getattribute__(self, "_inner").__exit__(*exc)
        finally:
            _watch_of(self).end()  # type: ignore[union-attr]

    async def __aenter__(self) -> Any:
        await object.__getattribute__(self, "_inner").__aenter__()
        return self

    async def __aexit__(self, *exc: Any) -> Any:
        try:
            return await object.__getattribute__(self, "_inner").__aexit__(*exc)
        finally:
            _watch_of(self).end()  # type: ignore[union-attr]


def watch_stream(stream: Any, finish: Finish, compact: Callable[[Any], Any] = _same) -> Any:
    """The same stream object, its chunks noted; a generator or an odd object gets a proxy."""
    watch = StreamWatch(finish, compact)
    if inspect.isgenerator(stream):
        return _watched_iter(stream, watch)
    if inspect.isasyncgen(stream):
        return _watched_aiter(stream, watch)
    base = type(stream)
    try:
        sub = _subclass(base)
        stream.__class__ = sub
    except Exception:  # noqa: BLE001 - slots, builtins, C types: proxy instead
        return _Proxy(stream, watch)
    try:
        object.__setattr__(stream, _WATCH, watch)
    except Exception:  # noqa: BLE001 - no room for the watch: put the class back
        stream.__class__ = base
        return _Proxy(stream, watch)
    return stream


def patch_method(owner: Any, name: str, make: Callable[[Callable[..., Any]], Callable[..., Any]]) -> bool:
    """Replaces ``owner.name`` (an instance attribute shadowing the class's method) once."""
    original = getattr(owner, name, None)
    if original is None or not callable(original) or getattr(original, "__cellar_wrapped__", False):
        return False
    wrapped = make(original)
    functools.update_wrapper(wrapped, original)
    wrapped.__cellar_wrapped__ = True  # type: ignore[attr-defined]
    setattr(owner, name, wrapped)
    return True


def now() -> float:
    return time.time()
