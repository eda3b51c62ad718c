"""The official ``anthropic`` client, found by duck typing (this module never imports ``anthropic``).

``wrap_anthropic(client)`` patches ``messages.create`` (plain, ``stream=True``, tool use) and
``messages.stream`` (the helper's ``with ... as stream`` form), sync and async.

The contract's ``/raw/traces`` takes ``provider: "openai"`` and the chat shape only, so a Claude
call is stored as that shape with its model name kept (docs/sdks.md, Python section): ``system``
becomes a system message, ``tool_use`` blocks become ``tool_calls`` (input as JSON arguments),
``tool_result`` blocks become ``tool`` messages, ``thinking`` becomes ``reasoning_content``.
Usage follows Cellar's pricing shape, where prompt tokens include the cache:
``prompt_tokens = input_tokens + cache_read_input_tokens + cache_creation_input_tokens`` with
``prompt_tokens_details.cached_tokens`` (reads) and ``.cache_creation_tokens`` (writes), so the
price table's Claude entry prices each part at its own rate.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any, Dict, List, Optional

from .._plain import field, to_plain
from ._calls import ClientRef, Mapper, snapshot_kwargs, wrap_call, _queue
from ._observe import patch_method

if TYPE_CHECKING:
    from ..client import Client

FINISH = {"end_turn": "stop", "stop_sequence": "stop", "max_tokens": "length", "tool_use": "tool_calls", "refusal": "content_filter", "pause_turn": "stop"}


def _int(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else 0


def _tool_result_text(content: Any) -> Any:
    if isinstance(content, str) or content is None:
        return content if content is not None else ""
    if isinstance(content, list) and all(isinstance(b, dict) and b.get("type") == "text" for b in content):
        return "".join(str(b.get("text", "")) for b in content)
    return json.dumps(content, ensure_ascii=False)


def to_chat_messages(role: str, content: Any) -> List[Dict[str, Any]]:
    """One Anthropic message as chat messages (tool results become ``tool`` messages)."""
    if isinstance(content, str) or content is None:
        return [{"role": role, "content": content if content is not None else ""}]
    texts: List[str] = []
    other: List[Dict[str, Any]] = []
    calls: List[Dict[str, Any]] = []
    reasoning: List[str] = []
    results: List[Dict[str, Any]] = []
    for block in content if isinstance(content, list) else []:
        if not isinstance(block, dict):
            continue
        kind = block.get("type")
        if kind == "text":
            texts.append(str(block.get("text", "")))
        elif kind == "tool_use":
            calls.append(
                {
                    "id": block.get("id"),
                    "type": "function",
                    "function": {
                        "name": block.get("name", ""),
                        "arguments": json.dumps(block.get("input", {}), ensure_ascii=False, separators=(",", ":")),
                    },
                }
            )
        elif kind == "tool_result":
            results.append(
                {"role": "tool", "tool_call_id": block.get("tool_use_id"), "content": _tool_result_text(block.get("content"))}
            )
        elif kind == "thinking":
            reasoning.append(str(block.get("thinking", "")))
        elif kind == "redacted_thinking":
            continue
        else:
            other.append(block)  # images, documents: kept as content parts
    out: List[Dict[str, Any]] = list(results)
    if texts or other or calls or reasoning or not results:
        message: Dict[str, Any] = {"role": role}
        if other:
            message["content"] = ([{"type": "text", "text": "".join(texts)}] if texts else []) + other
        else:
            message["content"] = "".join(texts) if (texts or not calls) else None
        if calls:
            message["tool_calls"] = calls
        if reasoning:
            message["reasoning_content"] = "".join(reasoning)
        out.append(message)
    return out


def request_messages(req: Dict[str, Any]) -> List[Dict[str, Any]]:
    messages: List[Dict[str, Any]] = []
    system = req.get("system")
    if isinstance(system, str) and system:
        messages.append({"role": "system", "content": system})
    elif isinstance(system, list):
        text = "".join(str(b.get("text", "")) for b in system if isinstance(b, dict))
        if text:
            messages.append({"role": "system", "content": text})
    for m in req.get("messages") or []:
        if isinstance(m, dict):
            messages.extend(to_chat_messages(str(m.get("role", "user")), m.get("content")))
    if not messages:
        messages.append({"role": "user", "content": ""})
    return messages


def chat_usage(u: Any) -> Dict[str, Any]:
    if not isinstance(u, dict):
        return {"prompt_tokens": 0, "completion_tokens": 0, "total_tokens": 0, "unreported": True}
    fresh = _int(u.get("input_tokens"))
    read = _int(u.get("cache_read_input_tokens"))
    written = _int(u.get("cache_creation_input_tokens"))
    completion = _int(u.get("output_tokens"))
    prompt = fresh + read + written
    usage: Dict[str, Any] = {"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion}
    if read or written:
        details: Dict[str, Any] = {"cached_tokens": read, "cache_creation_tokens": written}
        # The 1-hour part of the writes, billed at its own rate (Cellar's name: docs/pricing.md, "Rates").
        creation = u.get("cache_creation")
        hour = min(_int(creation.get("ephemeral_1h_input_tokens")), written) if isinstance(creation, dict) else 0
        if hour > 0:
            details["cache_creation_1h_tokens"] = hour
        usage["prompt_tokens_details"] = details
    return usage


def message_to_chat(data: Any) -> Dict[str, Any]:
    """An Anthropic ``Message`` as a ``chat.completion``."""
    m = to_plain(data)
    if not isinstance(m, dict):
        raise TypeError(f"message: expected an object, got {type(data).__name__}")
    message = to_chat_messages("assistant", m.get("content") or [])[-1]
    stop = m.get("stop_reason")
    out: Dict[str, Any] = {
        "id": m.get("id") or "msg-unknown",
        "object": "chat.completion",
        "created": 0,
        "model": m.get("model") or "unknown",
        "choices": [{"index": 0, "message": message, "finish_reason": FINISH.get(stop, stop) if stop else None}],
        "usage": chat_usage(m.get("usage")),
        "source_object": "anthropic.message",
    }
    # The tier that served the call (standard, priority, batch), which the price depends on.
    tier = m["usage"].get("service_tier") if isinstance(m.get("usage"), dict) else None
    if isinstance(tier, str):
        out["service_tier"] = tier
    return out


_DELTAS = {"text_delta": ("text", "text"), "input_json_delta": ("json", "partial_json"), "thinking_delta": ("thinking", "thinking")}


def compact_event(event: Any) -> Any:
    """On the caller's path: deltas as ``(kind, block index, text)``; pings and stops dropped."""
    if isinstance(event, dict):
        return event
    kind = getattr(event, "type", None)
    if kind == "content_block_delta":
        delta = getattr(event, "delta", None)
        known = _DELTAS.get(getattr(delta, "type", None))  # type: ignore[arg-type]
        if known is not None:
            text = getattr(delta, known[1], None)
            if type(text) is str:
                return (known[0], event.index, text)
        return event
    return None if kind in ("ping", "content_block_stop", "message_stop") else event


def message_from_events(events: List[Any]) -> Dict[str, Any]:
    """The ``Message`` a stream of message_start / content_block_* / message_delta events describes."""
    message: Dict[str, Any] = {"content": []}
    blocks: Dict[int, Dict[str, Any]] = {}
    partial_json: Dict[int, List[str]] = {}
    usage: Dict[str, Any] = {}
    for raw in events:
        if type(raw) is tuple:
            what, index, text = raw
            if what == "json":
                partial_json.setdefault(index, []).append(text)
            else:
                block = blocks.setdefault(index, {"type": what, what: ""})
                block[what] = str(block.get(what, "")) + text
            continue
        event = to_plain(raw)
        if not isinstance(event, dict):
            continue
        kind = event.get("type")
        if kind == "message_start" and isinstance(event.get("message"), dict):
            start = event["message"]
            message.update({k: v for k, v in start.items() if k not in ("content", "usage")})
            if isinstance(start.get("usage"), dict):
                usage.update(start["usage"])
        elif kind == "content_block_start" and isinstance(event.get("content_block"), dict):
            blocks[int(event.get("index", len(blocks)))] = dict(event["content_block"])
        elif kind == "content_block_delta" and isinstance(event.get("delta"), dict):
            index = int(event.get("index", 0))
            block = blocks.setdefault(index, {"type": "text", "text": ""})
            delta = event["delta"]
            dtype = delta.get("type")
            if dtype == "text_delta":
                block["text"] = str(block.get("text", "")) + str(delta.get("text", ""))
            elif dtype == "input_json_delta":
                partial_json.setdefault(index, []).append(str(delta.get("partial_json", "")))
            elif dtype == "thinking_delta":
                block["thinking"] = str(block.get("thinking", "")) + str(delta.get("thinking", ""))
        elif kind == "message_delta":
            delta = event.get("delta") or {}
            if isinstance(delta, dict) and delta.get("stop_reason") is not None:
                message["stop_reason"] = delta["stop_reason"]
            if isinstance(event.get("usage"), dict):
                # message_delta's usage is cumulative; fields it leaves out keep message_start's.
                usage.update({k: v for k, v in event["usage"].items() if v is not None})
    for index, parts in partial_json.items():
        text = "".join(parts)
        try:
            blocks[index]["input"] = json.loads(text) if text else {}
        except ValueError:
            blocks[index]["input"] = {"_partial_json": text}
    message["content"] = [blocks[i] for i in sorted(blocks)]
    message["usage"] = usage or None
    return message_to_chat(message)


def _request(req: Dict[str, Any]) -> Dict[str, Any]:
    plain = to_plain(req)
    plain = plain if isinstance(plain, dict) else {}
    request: Dict[str, Any] = {k: v for k, v in plain.items() if k not in ("messages", "system", "tools")}
    request["messages"] = request_messages(plain)
    tools = plain.get("tools")
    if isinstance(tools, list):
        request["tools"] = [
            {
                "type": "function",
                "function": {"name": t.get("name", ""), "description": t.get("description", ""), "parameters": t.get("input_schema", {})},
            }
            if isinstance(t, dict) and "input_schema" in t
            else t
            for t in tools
        ]
    request["api"] = "anthropic.messages"
    return request


def map_messages(req: Dict[str, Any], data: Any, streamed: bool) -> Optional[Dict[str, Any]]:
    response = message_from_events(data) if streamed else message_to_chat(data)
    request = _request(req)
    request.setdefault("model", response.get("model"))
    return {"request": request, "responses": [response]}


def map_snapshot(req: Dict[str, Any], data: Any, streamed: bool) -> Optional[Dict[str, Any]]:
    """``messages.stream``: the helper's accumulated final message (``current_message_snapshot``)."""
    return map_messages(req, data, False)


# --- messages.stream(): a context manager whose stream accumulates the message itself ---------


def _wrap_stream_helper(original: Any, ref: ClientRef) -> Any:
    import time as _time

    def stream(*args: Any, **kwargs: Any) -> Any:
        t0 = _time.time()
        manager = original(*args, **kwargs)
        cellar = ref()
        if cellar is None:
            return manager
        try:
            sid = cellar.session_for_call()
            if cellar.sampled(sid):
                req = snapshot_kwargs(kwargs, ("messages",))
                _watch_manager(manager, lambda snap, t1: _queue(cellar, map_snapshot, req, snap, False, sid, t0, t1))
        except Exception as err:  # noqa: BLE001
            cellar.report_internal("watching messages.stream", err)
        return manager

    return stream


_managers: Dict[type, type] = {}


def _watch_manager(manager: Any, done: Any) -> None:
    """Swaps the manager's class for one that notes the stream's final snapshot on exit."""
    import time as _time

    base = type(manager)
    sub = _managers.get(base)
    if sub is None:
        ns: Dict[str, Any] = {"__module__": base.__module__, "__qualname__": base.__qualname__}

        def take(self: Any) -> None:
            hook = self.__dict__.pop("_cellar_done", None)
            inner = self.__dict__.pop("_cellar_stream", None)
            if hook is None or inner is None:
                return
            try:
                snap = getattr(inner, "current_message_snapshot", None)
            except Exception:  # noqa: BLE001 - nothing received yet
                snap = None
            if snap is not None:
                hook(snap, _time.time())

        # The noting is written once; the sync and async twins differ only in the awaited call.
        def entered(self: Any, inner: Any) -> Any:
            self.__dict__["_cellar_stream"] = inner
            return inner

        def left(self: Any) -> None:
            try:
                take(self)
            except Exception:  # noqa: BLE001 - Cellar never breaks the caller's stream
                pass

        if hasattr(base, "__enter__"):

            def __enter__(self: Any) -> Any:  # noqa: N807
                return entered(self, base.__enter__(self))

            def __exit__(self: Any, *exc: Any) -> Any:  # noqa: N807
                try:
                    return base.__exit__(self, *exc)
                finally:
                    left(self)

            ns["__enter__"] = __enter__
            ns["__exit__"] = __exit__
        if hasattr(base, "__aenter__"):

            async def __aenter__(self: Any) -> Any:  # noqa: N807
                return entered(self, await base.__aenter__(self))

            async def __aexit__(self: Any, *exc: Any) -> Any:  # noqa: N807
                try:
                    return await base.__aexit__(self, *exc)
                finally:
                    left(self)

            ns["__aenter__"] = __aenter__
            ns["__aexit__"] = __aexit__
        sub = _managers.setdefault(base, type(base.__name__, (base,), ns))
    manager.__class__ = sub
    manager.__dict__["_cellar_done"] = done


def wrap_anthropic(client: Any, cellar: "Optional[Client]" = None) -> Any:
    """Records every ``messages.create`` / ``messages.stream`` call of this ``Anthropic``/``AsyncAnthropic``.

    Returns the same client object. ``cellar``: the Cellar client (default: ``cellar.init``'s).
    """
    from .. import get_client

    ref: ClientRef = (lambda: cellar) if cellar is not None else get_client
    messages = field(client, "messages")
    if messages is None:
        return client
    mapper: Mapper = map_messages
    patch_method(messages, "create", lambda orig: wrap_call(orig, ref, mapper, ("messages",), compact_event))
    patch_method(messages, "stream", lambda orig: _wrap_stream_helper(orig, ref))
    return client
