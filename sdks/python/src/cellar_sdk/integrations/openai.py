"""The official ``openai`` client, found by duck typing (this module never imports ``openai``).

``wrap_openai(client)`` patches, on that client instance only, ``chat.completions.create``
(plain, ``stream=True``, tool calls) and ``responses.create`` (plain and streamed), sync
(``OpenAI``) and async (``AsyncOpenAI``) alike, and returns the same client.

Responses API calls are mapped into the contract's trace shape (docs/sdks.md, Python section):
``instructions`` becomes a system message, ``input`` items become chat messages
(``function_call`` -> an assistant ``tool_calls`` entry, ``function_call_output`` -> a ``tool``
message), and the ``Response`` becomes a ``chat.completion`` (output text joined, function calls as
``tool_calls``, ``input_tokens``/``output_tokens`` as ``prompt_tokens``/``completion_tokens`` with
the cached and reasoning details kept).
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any, Dict, List, Optional

from .._plain import field, to_plain
from ._calls import ClientRef, wrap_call
from ._observe import patch_method

if TYPE_CHECKING:
    from ..client import Client


def _unreported_usage() -> Dict[str, Any]:
    # Streams without stream_options={"include_usage": True} carry no token counts.
    return {"prompt_tokens": 0, "completion_tokens": 0, "total_tokens": 0, "unreported": True}


def _int(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else 0


def _plain_request(req: Dict[str, Any]) -> Dict[str, Any]:
    request = to_plain(req)
    return request if isinstance(request, dict) else {}


# --- chat completions ------------------------------------------------------------------------


def chat_response(data: Any) -> Dict[str, Any]:
    response = to_plain(data)
    if not isinstance(response, dict):
        raise TypeError(f"chat completion: expected an object, got {type(data).__name__}")
    response = dict(response)  # to_plain may hand back the caller's own dict: never edit it
    response.setdefault("object", "chat.completion")
    if not isinstance(response.get("usage"), dict):
        response["usage"] = _unreported_usage()
    choices = response.get("choices")
    if isinstance(choices, list):
        response["choices"] = [{"finish_reason": None, **c} if isinstance(c, dict) else c for c in choices]
    return response


def compact_chat_chunk(chunk: Any) -> Any:
    """On the caller's path: a plain text delta as ``(choice index, text)``, anything else as is."""
    if isinstance(chunk, dict):
        return chunk
    try:
        choices = chunk.choices
        if len(choices) != 1 or getattr(chunk, "usage", None) is not None:
            return chunk
        choice = choices[0]
        delta = choice.delta
        text = getattr(delta, "content", None)
        if (
            type(text) is str
            and getattr(choice, "finish_reason", None) is None
            and getattr(delta, "role", None) is None
            and getattr(delta, "tool_calls", None) is None
            and getattr(delta, "refusal", None) is None
            and not getattr(delta, "model_extra", None)
        ):
            return (choice.index, text)
    except Exception:  # noqa: BLE001 - an unexpected shape is kept whole
        pass
    return chunk


def _chat_slot() -> Dict[str, Any]:
    return {"role": "assistant", "content": [], "refusal": [], "reasoning": [], "tools": {}, "finish": None}


def chat_from_chunks(chunks: List[Any]) -> Dict[str, Any]:
    """A ``chat.completion`` assembled from ``chat.completion.chunk`` objects, as OpenAI would return it."""
    head: Dict[str, Any] = {}
    usage: Optional[Dict[str, Any]] = None
    choices: Dict[int, Dict[str, Any]] = {}
    for raw in chunks:
        if type(raw) is tuple:
            choices.setdefault(raw[0], _chat_slot())["content"].append(raw[1])
            continue
        chunk = to_plain(raw)
        if not isinstance(chunk, dict):
            continue
        for key in ("id", "created", "model", "system_fingerprint", "service_tier"):
            if chunk.get(key) is not None and key not in head:
                head[key] = chunk[key]
        if isinstance(chunk.get("usage"), dict):
            usage = chunk["usage"]
        for choice in chunk.get("choices") or []:
            index = choice.get("index", 0)
            slot = choices.setdefault(index, _chat_slot())
            delta = choice.get("delta") or {}
            if delta.get("role"):
                slot["role"] = delta["role"]
            if isinstance(delta.get("content"), str):
                slot["content"].append(delta["content"])
            if isinstance(delta.get("refusal"), str):
                slot["refusal"].append(delta["refusal"])
            if isinstance(delta.get("reasoning_content"), str):
                slot["reasoning"].append(delta["reasoning_content"])
            for call in delta.get("tool_calls") or []:
                tool = slot["tools"].setdefault(
                    call.get("index", 0), {"id": None, "type": "function", "function": {"name": "", "arguments": ""}}
                )
                if call.get("id"):
                    tool["id"] = call["id"]
                if call.get("type"):
                    tool["type"] = call["type"]
                fn = call.get("function") or {}
                if fn.get("name"):
                    tool["function"]["name"] += fn["name"]
                if fn.get("arguments"):
                    tool["function"]["arguments"] += fn["arguments"]
            if choice.get("finish_reason") is not None:
                slot["finish"] = choice["finish_reason"]
    out_choices = []
    for index in sorted(choices):
        slot = choices[index]
        message: Dict[str, Any] = {"role": slot["role"]}
        tools = [slot["tools"][i] for i in sorted(slot["tools"])]
        text = "".join(slot["content"])
        message["content"] = text if (text or not tools) else None
        if slot["refusal"]:
            message["refusal"] = "".join(slot["refusal"])
        if slot["reasoning"]:
            message["reasoning_content"] = "".join(slot["reasoning"])
        if tools:
            message["tool_calls"] = tools
        out_choices.append({"index": index, "message": message, "finish_reason": slot["finish"]})
    return {
        "id": head.get("id") or "chatcmpl-unknown",
        "object": "chat.completion",
        "created": head.get("created", 0),
        "model": head.get("model") or "unknown",
        **({"system_fingerprint": head["system_fingerprint"]} if "system_fingerprint" in head else {}),
        "choices": out_choices or [{"index": 0, "message": {"role": "assistant", "content": ""}, "finish_reason": None}],
        "usage": usage if usage is not None else _unreported_usage(),
    }


def map_chat(req: Dict[str, Any], data: Any, streamed: bool) -> Optional[Dict[str, Any]]:
    request = _plain_request(req)
    response = chat_from_chunks(data) if streamed else chat_response(data)
    request.setdefault("model", response.get("model"))
    return {"request": request, "responses": [response]}


# --- Responses API ---------------------------------------------------------------------------

_TEXT_PARTS = ("input_text", "output_text", "text")


def _parts_text(content: Any) -> Any:
    """Chat-shaped content from Responses content: a string when every part is text, else parts."""
    if isinstance(content, str) or content is None:
        return content
    if not isinstance(content, list):
        return str(content)
    if all(isinstance(p, dict) and p.get("type") in _TEXT_PARTS for p in content):
        return "".join(str(p.get("text", "")) for p in content)
    parts = []
    for p in content:
        if not isinstance(p, dict):
            continue
        if p.get("type") in _TEXT_PARTS:
            parts.append({"type": "text", "text": p.get("text", "")})
        else:
            parts.append(p)
    return parts


def _output_text(value: Any) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        return "".join(str(p.get("text", "")) if isinstance(p, dict) else str(p) for p in value)
    return json.dumps(value, ensure_ascii=False)


def responses_messages(req: Dict[str, Any]) -> List[Dict[str, Any]]:
    messages: List[Dict[str, Any]] = []
    instructions = req.get("instructions")
    if isinstance(instructions, str) and instructions:
        messages.append({"role": "system", "content": instructions})
    items = req.get("input")
    if isinstance(items, str):
        messages.append({"role": "user", "content": items})
        return messages
    for item in items if isinstance(items, list) else []:
        kind = item.get("type")
        if kind == "function_call":
            call = {
                "id": item.get("call_id") or item.get("id"),
                "type": "function",
                "function": {"name": item.get("name", ""), "arguments": item.get("arguments", "")},
            }
            last = messages[-1] if messages else None
            if last is not None and last.get("role") == "assistant" and "tool_calls" in last:
                last["tool_calls"].append(call)
            else:
                messages.append({"role": "assistant", "content": None, "tool_calls": [call]})
        elif kind == "function_call_output":
            messages.append(
                {"role": "tool", "tool_call_id": item.get("call_id"), "content": _output_text(item.get("output"))}
            )
        elif (kind is None or kind == "message") and item.get("role"):
            messages.append({"role": item["role"], "content": _parts_text(item.get("content"))})
    if not messages:
        # The contract needs one message; a call that only continues previous_response_id has none.
        messages.append({"role": "user", "content": ""})
    return messages


def _chat_tools(tools: Any) -> Any:
    if not isinstance(tools, list):
        return tools
    out = []
    for tool in tools:
        if isinstance(tool, dict) and tool.get("type") == "function" and "function" not in tool:
            fn = {k: tool[k] for k in ("name", "description", "parameters", "strict") if k in tool}
            out.append({"type": "function", "function": fn})
        else:
            out.append(tool)
    return out


def responses_request(req: Dict[str, Any]) -> Dict[str, Any]:
    plain = _plain_request(req)
    request: Dict[str, Any] = {k: v for k, v in plain.items() if k not in ("input", "instructions", "tools")}
    request["messages"] = responses_messages(plain)
    request["api"] = "responses"
    if "tools" in plain:
        request["tools"] = _chat_tools(plain["tools"])
    return request


def response_to_chat(data: Any) -> Dict[str, Any]:
    """A ``Response`` object as the ``chat.completion`` the contract stores."""
    r = to_plain(data)
    if not isinstance(r, dict):
        raise TypeError(f"response: expected an object, got {type(data).__name__}")
    texts: List[str] = []
    refusals: List[str] = []
    reasoning: List[str] = []
    calls: List[Dict[str, Any]] = []
    for item in r.get("output") or []:
        kind = item.get("type")
        if kind == "message":
            for part in item.get("content") or []:
                if part.get("type") == "output_text":
                    texts.append(str(part.get("text", "")))
                elif part.get("type") == "refusal":
                    refusals.append(str(part.get("refusal", "")))
        elif kind == "function_call":
            calls.append(
                {
                    "id": item.get("call_id") or item.get("id"),
                    "type": "function",
                    "function": {"name": item.get("name", ""), "arguments": item.get("arguments", "")},
                }
            )
        elif kind == "reasoning":
            for s in item.get("summary") or []:
                if isinstance(s, dict) and s.get("text"):
                    reasoning.append(str(s["text"]))
    text = "".join(texts)
    message: Dict[str, Any] = {"role": "assistant", "content": text if (text or not calls) else None}
    if refusals:
        message["refusal"] = "".join(refusals)
    if reasoning:
        message["reasoning_content"] = "\n".join(reasoning)
    if calls:
        message["tool_calls"] = calls
    reason = (r.get("incomplete_details") or {}).get("reason") if isinstance(r.get("incomplete_details"), dict) else None
    if calls:
        finish = "tool_calls"
    elif r.get("status") == "incomplete" and reason == "max_output_tokens":
        finish = "length"
    elif r.get("status") == "incomplete" and reason == "content_filter":
        finish = "content_filter"
    else:
        finish = "stop"
    u = r.get("usage")
    if isinstance(u, dict):
        prompt, completion = _int(u.get("input_tokens")), _int(u.get("output_tokens"))
        usage: Dict[str, Any] = {
            "prompt_tokens": prompt,
            "completion_tokens": completion,
            "total_tokens": _int(u.get("total_tokens")) or prompt + completion,
        }
        cached = field(u.get("input_tokens_details"), "cached_tokens")
        if isinstance(cached, int):
            usage["prompt_tokens_details"] = {"cached_tokens": cached}
        reasoning_tokens = field(u.get("output_tokens_details"), "reasoning_tokens")
        if isinstance(reasoning_tokens, int):
            usage["completion_tokens_details"] = {"reasoning_tokens": reasoning_tokens}
    else:
        usage = _unreported_usage()
    created = r.get("created_at")
    out: Dict[str, Any] = {
        "id": r.get("id") or "resp-unknown",
        "object": "chat.completion",
        "created": int(created) if isinstance(created, (int, float)) else 0,
        "model": r.get("model") or "unknown",
        "choices": [{"index": 0, "message": message, "finish_reason": finish}],
        "usage": usage,
        "source_object": "response",
    }
    # The tier that served the call (default, flex, priority...), which the price depends on.
    if isinstance(r.get("service_tier"), str):
        out["service_tier"] = r["service_tier"]
    return out


_FINAL_EVENTS = ("response.completed", "response.incomplete", "response.failed")


_KEPT_EVENTS = frozenset(
    {"response.created", "response.in_progress", "response.output_item.done", *_FINAL_EVENTS}
)


def compact_response_event(event: Any) -> Any:
    """On the caller's path: text deltas as ``("delta", text)``, events the trace needs as they are."""
    if isinstance(event, dict):
        return event
    kind = getattr(event, "type", None)
    if kind == "response.output_text.delta":
        delta = getattr(event, "delta", None)
        return ("delta", delta) if type(delta) is str else event
    return event if kind in _KEPT_EVENTS or kind is None else None


def response_from_events(events: List[Any]) -> Dict[str, Any]:
    """The final ``Response`` of a stream (``response.completed`` carries it), else one pieced together."""
    latest: Optional[Dict[str, Any]] = None
    items: Dict[int, Any] = {}
    deltas: List[str] = []
    for raw in events:
        if type(raw) is tuple:
            deltas.append(raw[1])
            continue
        event = to_plain(raw)
        if not isinstance(event, dict):
            continue
        kind = event.get("type")
        if kind in _FINAL_EVENTS and isinstance(event.get("response"), dict):
            return response_to_chat(event["response"])
        if isinstance(event.get("response"), dict):
            latest = event["response"]
        elif kind == "response.output_item.done" and isinstance(event.get("item"), dict):
            items[int(event.get("output_index", len(items)))] = event["item"]
        elif kind == "response.output_text.delta" and isinstance(event.get("delta"), str):
            deltas.append(event["delta"])
    partial: Dict[str, Any] = dict(latest or {})
    partial["status"] = "incomplete"
    partial.pop("usage", None)
    output = [items[i] for i in sorted(items)]
    if not any(isinstance(o, dict) and o.get("type") == "message" for o in output) and deltas:
        output.append({"type": "message", "content": [{"type": "output_text", "text": "".join(deltas)}]})
    partial["output"] = output
    return response_to_chat(partial)


def map_responses(req: Dict[str, Any], data: Any, streamed: bool) -> Optional[Dict[str, Any]]:
    request = responses_request(req)
    response = response_from_events(data) if streamed else response_to_chat(data)
    request.setdefault("model", response.get("model"))
    return {"request": request, "responses": [response]}


# --- wrapping --------------------------------------------------------------------------------


def wrap_openai(client: Any, cellar: "Optional[Client]" = None) -> Any:
    """Records every chat completion and Responses API call of this ``OpenAI``/``AsyncOpenAI``.

    Returns the same client object. ``cellar``: the Cellar client to use (default: the one
    ``cellar.init`` made, looked up at each call, so wrapping before ``init`` is fine).
    """
    from .. import get_client

    ref: ClientRef = (lambda: cellar) if cellar is not None else get_client
    chat = field(field(client, "chat"), "completions")
    if chat is not None:
        patch_method(chat, "create", lambda orig: wrap_call(orig, ref, map_chat, ("messages",), compact_chat_chunk))
    responses = field(client, "responses")
    if responses is not None:
        patch_method(responses, "create", lambda orig: wrap_call(orig, ref, map_responses, ("input",), compact_response_event))
    return client
