"""Shared pieces of the tests: a client pointed at a fake ingest, waiting without timing asserts."""

from __future__ import annotations

import time
from typing import Any, Callable, List, Optional, TypeVar

import cellar_sdk as cellar

from .fake_ingest import FakeIngest

T = TypeVar("T")

SECRET = "s" * 32


def client_for(ingest: FakeIngest, errors: Optional[List[cellar.CellarError]] = None, **options: Any) -> cellar.Client:
    """A client configured by a DSN alone that points at ``ingest``; fast backoff, no exit hook."""
    options.setdefault("backoff_base", 0.01)
    options.setdefault("backoff_max", 0.05)
    options.setdefault("flush_interval", 0.05)
    options.setdefault("flush_at_exit", False)
    sink = errors if errors is not None else []
    client = cellar.Client(cellar.build_dsn(ingest.url, "py-app", SECRET), on_error=sink.append, **options)
    _clients.append(client)
    return client


_clients: List[cellar.Client] = []


def close_clients() -> None:
    """Shuts down every client ``client_for`` made (closes their connections)."""
    while _clients:
        _clients.pop().shutdown(0.5)


def wait_for(fn: Callable[[], Optional[T]], what: str, timeout: float = 30.0) -> T:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = fn()
        if value:
            return value
        time.sleep(0.02)
    raise AssertionError(f"timed out waiting for {what}")


def chat_request(content: str) -> dict:
    return {"model": "gpt-4o-mini", "messages": [{"role": "user", "content": content}]}


def chat_response(reply: str, prompt: int = 10, completion: int = 5) -> dict:
    return {
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "model": "gpt-4o-mini-2024-07-18",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": reply}, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion},
    }
