"""The session a call belongs to, carried in a ``contextvars.ContextVar``.

``with session("id"):`` and ``@session("id")`` set it for the calls inside. asyncio tasks created
inside copy the context, so they see it; threads do not copy contexts by themselves, so
``bind(fn)`` (or ``session(...).bind(fn)``) hands a function the caller's context explicitly.
"""

from __future__ import annotations

import contextvars
import functools
import inspect
import uuid
from typing import Any, Callable, Optional, TypeVar, cast

F = TypeVar("F", bound=Callable[..., Any])

_current: contextvars.ContextVar[Optional[str]] = contextvars.ContextVar("cellar_session_id", default=None)


def current_session_id() -> Optional[str]:
    """The session id set by the innermost ``session`` around the caller, or None."""
    return _current.get()


class session:  # noqa: N801 - used like a function: ``with cellar.session("id")``
    """Sets the session id for the calls inside; a context manager and a decorator.

    ``session()`` without an id makes a fresh one (``uuid4`` hex). As a decorator each call of
    the function runs in the session (sync and ``async def`` functions alike).
    """

    def __init__(self, session_id: Optional[str] = None) -> None:
        if session_id is not None and (not isinstance(session_id, str) or not session_id.strip()):
            raise ValueError("session_id: a non-blank string")
        self.id: str = session_id if session_id is not None else uuid.uuid4().hex
        self._tokens: list[contextvars.Token[Optional[str]]] = []

    def __enter__(self) -> "session":
        self._tokens.append(_current.set(self.id))
        return self

    def __exit__(self, *exc: object) -> None:
        _current.reset(self._tokens.pop())

    async def __aenter__(self) -> "session":
        return self.__enter__()

    async def __aexit__(self, *exc: object) -> None:
        self.__exit__()

    def __call__(self, fn: F) -> F:
        sid = self.id
        if inspect.iscoroutinefunction(fn):

            @functools.wraps(fn)
            async def run_async(*args: Any, **kwargs: Any) -> Any:
                token = _current.set(sid)
                try:
                    return await fn(*args, **kwargs)
                finally:
                    _current.reset(token)

            return cast(F, run_async)

        @functools.wraps(fn)
        def run(*args: Any, **kwargs: Any) -> Any:
            token = _current.set(sid)
            try:
                return fn(*args, **kwargs)
            finally:
                _current.reset(token)

        return cast(F, run)

    def bind(self, fn: F) -> F:
        """``fn`` run in this session wherever it is called (a thread, an executor)."""
        return self(fn)


def bind(fn: F) -> F:
    """``fn`` run in a copy of the caller's current context (its session included), on any thread.

    ``executor.submit(cellar.bind(work))`` or ``threading.Thread(target=cellar.bind(work))``.
    """
    ctx = contextvars.copy_context()

    @functools.wraps(fn)
    def run(*args: Any, **kwargs: Any) -> Any:
        return ctx.copy().run(fn, *args, **kwargs)

    return cast(F, run)
