"""What the providers' HTTP APIs send, as bytes on the wire: JSON bodies and SSE streams.

Each builder takes one scripted answer (text, tool calls, usage) and returns the JSON body or
the SSE text the API would send for it, in the shapes the OpenAI and Anthropic API references
document (field for field, including the nulls and the empty arrays). The fake clients in
fake_providers.py parse these bytes as the official SDKs do; the expected values a test checks
come from the script, never from the SDK's own mapping code.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional, Tuple


@dataclass
class Answer:
    """One scripted model answer."""

    text: Optional[str] = None
    tool_calls: List[Tuple[str, str, Dict[str, Any]]] = field(default_factory=list)  # (id, name, args)
    model: str = "gpt-4o-mini-2024-07-18"
    prompt_tokens: int = 100
    completion_tokens: int = 20
    cached_tokens: int = 0
    cache_write_tokens: int = 0  # Anthropic only
    cache_write_1h_tokens: int = 0  # Anthropic only: the 1-hour part of cache_write_tokens
    service_tier: Optional[str] = None  # as the response names it; None: the API's default answer
    reasoning_tokens: int = 0
    id: str = "x"


def _sse(events: List[Tuple[Optional[str], str]]) -> str:
    out = []
    for name, data in events:
        if name:
            out.append(f"event: {name}\n")
        out.append(f"data: {data}\n\n")
    return "".join(out)


def _dumps(obj: Any) -> str:
    return json.dumps(obj, separators=(",", ":"))


# --- OpenAI chat completions -----------------------------------------------------------------


def _openai_usage(a: Answer) -> Dict[str, Any]:
    return {
        "prompt_tokens": a.prompt_tokens,
        "completion_tokens": a.completion_tokens,
        "total_tokens": a.prompt_tokens + a.completion_tokens,
        "prompt_tokens_details": {"cached_tokens": a.cached_tokens, "audio_tokens": 0},
        "completion_tokens_details": {
            "reasoning_tokens": a.reasoning_tokens,
            "audio_tokens": 0,
            "accepted_prediction_tokens": 0,
            "rejected_prediction_tokens": 0,
        },
    }


def chat_completion_json(a: Answer) -> str:
    message: Dict[str, Any] = {"role": "assistant", "content": a.text, "refusal": None, "annotations": []}
    if a.tool_calls:
        message["tool_calls"] = [
            {"id": cid, "type": "function", "function": {"name": name, "arguments": _dumps(args)}}
            for cid, name, args in a.tool_calls
        ]
    return _dumps(
        {
            "id": f"chatcmpl-{a.id}",
            "object": "chat.completion",
            "created": 1764000000,
            "model": a.model,
            "choices": [
                {
                    "index": 0,
                    "message": message,
                    "logprobs": None,
                    "finish_reason": "tool_calls" if a.tool_calls else "stop",
                }
            ],
            "usage": _openai_usage(a),
            "service_tier": "default",
            "system_fingerprint": "fp_560af6e559",
        }
    )


def chat_completion_sse(a: Answer, include_usage: bool) -> str:
    def chunk(choices: List[Dict[str, Any]], usage: Any = None) -> str:
        body: Dict[str, Any] = {
            "id": f"chatcmpl-{a.id}",
            "object": "chat.completion.chunk",
            "created": 1764000000,
            "model": a.model,
            "service_tier": "default",
            "system_fingerprint": "fp_560af6e559",
            "choices": choices,
        }
        if include_usage:
            body["usage"] = usage
        return _dumps(body)

    events: List[Tuple[Optional[str], str]] = []
    first: Dict[str, Any] = {"role": "assistant", "content": "" if not a.tool_calls else None, "refusal": None}
    events.append((None, chunk([{"index": 0, "delta": first, "logprobs": None, "finish_reason": None}])))
    if a.text:
        words = a.text.split(" ")
        for i, w in enumerate(words):
            piece = w if i == 0 else " " + w
            events.append((None, chunk([{"index": 0, "delta": {"content": piece}, "logprobs": None, "finish_reason": None}])))
    for n, (cid, name, args) in enumerate(a.tool_calls):
        head = {"index": n, "id": cid, "type": "function", "function": {"name": name, "arguments": ""}}
        events.append((None, chunk([{"index": 0, "delta": {"tool_calls": [head]}, "logprobs": None, "finish_reason": None}])))
        text = _dumps(args)
        for i in range(0, len(text), 7):
            part = {"index": n, "function": {"arguments": text[i : i + 7]}}
            events.append((None, chunk([{"index": 0, "delta": {"tool_calls": [part]}, "logprobs": None, "finish_reason": None}])))
    finish = "tool_calls" if a.tool_calls else "stop"
    events.append((None, chunk([{"index": 0, "delta": {}, "logprobs": None, "finish_reason": finish}])))
    if include_usage:
        events.append((None, chunk([], _openai_usage(a))))
    events.append((None, "[DONE]"))
    return _sse(events)


# --- OpenAI Responses API --------------------------------------------------------------------


def _response_output(a: Answer) -> List[Dict[str, Any]]:
    output: List[Dict[str, Any]] = []
    if a.reasoning_tokens:
        output.append({"id": f"rs_{a.id}", "type": "reasoning", "summary": []})
    for cid, name, args in a.tool_calls:
        output.append(
            {"id": f"fc_{cid}", "type": "function_call", "status": "completed", "arguments": _dumps(args), "call_id": cid, "name": name}
        )
    if a.text is not None:
        output.append(
            {
                "id": f"msg_{a.id}",
                "type": "message",
                "status": "completed",
                "content": [{"type": "output_text", "annotations": [], "logprobs": [], "text": a.text}],
                "role": "assistant",
            }
        )
    return output


def response_json_obj(a: Answer, status: str = "completed", with_output: bool = True) -> Dict[str, Any]:
    return {
        "id": f"resp_{a.id}",
        "object": "response",
        "created_at": 1764000000,
        "status": status,
        "background": False,
        "error": None,
        "incomplete_details": None,
        "instructions": None,
        "max_output_tokens": None,
        "model": a.model,
        "output": _response_output(a) if with_output else [],
        "parallel_tool_calls": True,
        "previous_response_id": None,
        "reasoning": {"effort": None, "summary": None},
        "service_tier": a.service_tier or "default",
        "store": True,
        "temperature": 1.0,
        "text": {"format": {"type": "text"}, "verbosity": "medium"},
        "tool_choice": "auto",
        "tools": [],
        "top_p": 1.0,
        "truncation": "disabled",
        "usage": {
            "input_tokens": a.prompt_tokens,
            "input_tokens_details": {"cached_tokens": a.cached_tokens},
            "output_tokens": a.completion_tokens,
            "output_tokens_details": {"reasoning_tokens": a.reasoning_tokens},
            "total_tokens": a.prompt_tokens + a.completion_tokens,
        }
        if status == "completed"
        else None,
        "user": None,
        "metadata": {},
    }


def response_json(a: Answer) -> str:
    return _dumps(response_json_obj(a))


def response_sse(a: Answer) -> str:
    seq = 0
    events: List[Tuple[Optional[str], str]] = []

    def emit(kind: str, body: Dict[str, Any]) -> None:
        nonlocal seq
        events.append((kind, _dumps({"type": kind, "sequence_number": seq, **body})))
        seq += 1

    emit("response.created", {"response": response_json_obj(a, "in_progress", False)})
    emit("response.in_progress", {"response": response_json_obj(a, "in_progress", False)})
    for index, item in enumerate(_response_output(a)):
        if item["type"] == "message":
            emit("response.output_item.added", {"output_index": index, "item": {**item, "status": "in_progress", "content": []}})
            emit(
                "response.content_part.added",
                {"item_id": item["id"], "output_index": index, "content_index": 0, "part": {"type": "output_text", "annotations": [], "text": ""}},
            )
            for w in (a.text or "").split(" "):
                emit(
                    "response.output_text.delta",
                    {"item_id": item["id"], "output_index": index, "content_index": 0, "delta": w + " ", "logprobs": []},
                )
            emit("response.output_text.done", {"item_id": item["id"], "output_index": index, "content_index": 0, "text": a.text, "logprobs": []})
            emit("response.content_part.done", {"item_id": item["id"], "output_index": index, "content_index": 0, "part": item["content"][0]})
        elif item["type"] == "function_call":
            emit("response.output_item.added", {"output_index": index, "item": {**item, "status": "in_progress", "arguments": ""}})
            emit("response.function_call_arguments.delta", {"item_id": item["id"], "output_index": index, "delta": item["arguments"]})
            emit("response.function_call_arguments.done", {"item_id": item["id"], "output_index": index, "arguments": item["arguments"]})
        else:
            emit("response.output_item.added", {"output_index": index, "item": item})
        emit("response.output_item.done", {"output_index": index, "item": item})
    emit("response.completed", {"response": response_json_obj(a)})
    return _sse(events)


# --- Anthropic messages ----------------------------------------------------------------------


def _anthropic_usage(a: Answer, output_tokens: int) -> Dict[str, Any]:
    return {
        "input_tokens": a.prompt_tokens,
        "cache_creation_input_tokens": a.cache_write_tokens,
        "cache_read_input_tokens": a.cached_tokens,
        "cache_creation": {
            "ephemeral_5m_input_tokens": a.cache_write_tokens - a.cache_write_1h_tokens,
            "ephemeral_1h_input_tokens": a.cache_write_1h_tokens,
        },
        "output_tokens": output_tokens,
        "service_tier": a.service_tier or "standard",
    }


def _anthropic_content(a: Answer) -> List[Dict[str, Any]]:
    content: List[Dict[str, Any]] = []
    if a.text is not None:
        content.append({"type": "text", "text": a.text})
    for cid, name, args in a.tool_calls:
        content.append({"type": "tool_use", "id": cid, "name": name, "input": args})
    return content


def anthropic_message_obj(a: Answer) -> Dict[str, Any]:
    return {
        "id": f"msg_{a.id}",
        "type": "message",
        "role": "assistant",
        "model": a.model,
        "content": _anthropic_content(a),
        "stop_reason": "tool_use" if a.tool_calls else "end_turn",
        "stop_sequence": None,
        "usage": _anthropic_usage(a, a.completion_tokens),
    }


def anthropic_message_json(a: Answer) -> str:
    return _dumps(anthropic_message_obj(a))


def anthropic_sse(a: Answer) -> str:
    events: List[Tuple[Optional[str], str]] = []

    def emit(kind: str, body: Dict[str, Any]) -> None:
        events.append((kind, _dumps({"type": kind, **body})))

    start = {**anthropic_message_obj(a), "content": [], "stop_reason": None, "usage": _anthropic_usage(a, 1)}
    emit("message_start", {"message": start})
    emit("ping", {})
    for index, block in enumerate(_anthropic_content(a)):
        if block["type"] == "text":
            emit("content_block_start", {"index": index, "content_block": {"type": "text", "text": ""}})
            words = block["text"].split(" ")
            for i, w in enumerate(words):
                emit("content_block_delta", {"index": index, "delta": {"type": "text_delta", "text": w if i == 0 else " " + w}})
        else:
            emit("content_block_start", {"index": index, "content_block": {**block, "input": {}}})
            text = _dumps(block["input"])
            for i in range(0, len(text), 9):
                emit("content_block_delta", {"index": index, "delta": {"type": "input_json_delta", "partial_json": text[i : i + 9]}})
        emit("content_block_stop", {"index": index})
    emit(
        "message_delta",
        {
            "delta": {"stop_reason": "tool_use" if a.tool_calls else "end_turn", "stop_sequence": None},
            "usage": {"output_tokens": a.completion_tokens},
        },
    )
    emit("message_stop", {})
    return _sse(events)
