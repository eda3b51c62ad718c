"""Cellar's Python SDK: traces and events of AI applications, sent in the background.

    import cellar_sdk as cellar
    cellar.init("svc-ing-s-...")            # or CELLAR_DSN in the environment
    client = cellar.wrap_openai(OpenAI())   # every call is recorded; nothing else changes
"""

from __future__ import annotations

import threading
from typing import Any, Mapping, Optional

from ._version import __version__
from .client import Client
from .dsn import ConfigError, build_dsn, parse_credential
from .errors import CellarError, FlushResult
from .integrations import wrap_anthropic, wrap_openai
from .redact import luhn_valid, redact_cards, redact_emails, redact_secrets
from .sampling import fmix32, fnv1a32, sample_hash, session_sampled
from .session import bind, current_session_id, session

__all__ = [
    "CellarError",
    "Client",
    "ConfigError",
    "FlushResult",
    "__version__",
    "bind",
    "build_dsn",
    "current_session_id",
    "event",
    "flush",
    "fmix32",
    "fnv1a32",
    "get_client",
    "init",
    "luhn_valid",
    "parse_credential",
    "redact_cards",
    "redact_emails",
    "redact_secrets",
    "sample_hash",
    "session",
    "session_sampled",
    "shutdown",
    "trace",
    "wrap_anthropic",
    "wrap_openai",
]

_default: Optional[Client] = None
_default_lock = threading.Lock()


def init(dsn: Optional[str] = None, **options: Any) -> Client:
    """Makes the process-wide client (replacing, and shutting down, an earlier one)."""
    global _default
    client = Client(dsn, **options)
    with _default_lock:
        previous, _default = _default, client
    if previous is not None:
        previous.shutdown()
    return client


def get_client() -> Optional[Client]:
    """The client ``init`` made, or None."""
    return _default


def trace(payload: Optional[Mapping[str, Any]] = None, **fields: Any) -> bool:
    """``Client.trace`` on the ``init`` client; False (nothing sent) before ``init``."""
    client = _default
    return client.trace(payload, **fields) if client is not None else False


def event(name: str, **fields: Any) -> bool:
    """``Client.event`` on the ``init`` client; False (nothing sent) before ``init``."""
    client = _default
    return client.event(name, **fields) if client is not None else False


def flush(timeout: Optional[float] = 30.0) -> FlushResult:
    client = _default
    return client.flush(timeout) if client is not None else FlushResult()


def shutdown(timeout: Optional[float] = None) -> FlushResult:
    client = _default
    return client.shutdown(timeout) if client is not None else FlushResult()


