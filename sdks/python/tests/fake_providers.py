"""Stand-ins for the official ``openai`` and ``anthropic`` clients (not installable here).

They are built the way those SDKs are: resources reached as attributes (``client.chat.completions``,
``client.responses``, ``client.messages``), results parsed from the API's wire JSON into objects
with attribute access and ``model_dump()`` (pydantic's interface), streams that parse SSE bytes
lazily and expose ``__iter__``/``__next__``/``close``/``with`` like ``openai.Stream`` and
``anthropic.Stream`` (their async twins likewise), ``messages.stream()`` returning a context
manager whose stream offers ``current_message_snapshot``. Both flavours of async method exist in
the wild: ``async def`` and a plain function returning a coroutine (what openai's
``required_args`` decorator produces), so both are faked.
"""

from __future__ import annotations

import json
from typing import Any, Callable, Dict, Iterator, List, Optional

from . import wire


class Model:
    """A parsed API object: attributes, ``model_dump()``, equality by content."""

    def __init__(self, data: Dict[str, Any]) -> None:
        self.__dict__["_data"] = data
        for key, value in data.items():
            self.__dict__[key] = _model(value)

    def model_dump(self, mode: str = "python", exclude_none: bool = False) -> Dict[str, Any]:
        return _strip(json.loads(json.dumps(self._data)), exclude_none)

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError("API objects are frozen in this fake")

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Model) and other._data == self._data

    def __hash__(self) -> int:
        return id(self)

    def __iter__(self) -> Iterator[Any]:  # pydantic models iterate their fields
        return iter(self._data.items())


def _model(value: Any) -> Any:
    if isinstance(value, dict):
        return Model(value)
    if isinstance(value, list):
        return [_model(v) for v in value]
    return value


def _strip(value: Any, exclude_none: bool) -> Any:
    if isinstance(value, dict):
        return {k: _strip(v, exclude_none) for k, v in value.items() if not (exclude_none and v is None)}
    if isinstance(value, list):
        return [_strip(v, exclude_none) for v in value]
    return value


def parse_sse(text: str) -> Iterator[Dict[str, Any]]:
    """SSE as the SDKs decode it: ``data:`` lines of each event, ``[DONE]`` ends an OpenAI stream."""
    for block in text.split("\n\n"):
        data = [line[5:].lstrip() for line in block.split("\n") if line.startswith("data:")]
        if not data:
            continue
        payload = "\n".join(data)
        if payload.startswith("[DONE]"):
            return
        yield json.loads(payload)


class FakeHTTPResponse:
    status_code = 200
    headers = {"content-type": "text/event-stream"}


class Stream:
    """``openai.Stream`` / ``anthropic.Stream``: iterates parsed events; ``close()`` and ``with``."""

    def __init__(self, sse: str, skip: Callable[[Dict[str, Any]], bool] = lambda e: False) -> None:
        self.response = FakeHTTPResponse()
        self.closed = False
        self._iterator = self.__stream__(sse, skip)

    def __stream__(self, sse: str, skip: Callable[[Dict[str, Any]], bool]) -> Iterator[Model]:
        for event in parse_sse(sse):
            if not skip(event):
                yield Model(event)

    def __next__(self) -> Model:
        return self._iterator.__next__()

    def __iter__(self) -> Iterator[Model]:
        for item in self._iterator:
            yield item

    def __enter__(self) -> "Stream":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def close(self) -> None:
        self.closed = True


class AsyncStream:
    def __init__(self, sse: str, skip: Callable[[Dict[str, Any]], bool] = lambda e: False) -> None:
        self.response = FakeHTTPResponse()
        self.closed = False
        self._iterator = self.__stream__(sse, skip)

    async def __stream__(self, sse: str, skip: Callable[[Dict[str, Any]], bool]) -> Any:
        for event in parse_sse(sse):
            if not skip(event):
                yield Model(event)

    async def __anext__(self) -> Model:
        return await self._iterator.__anext__()

    async def __aiter__(self) -> Any:
        async for item in self._iterator:
            yield item

    async def __aenter__(self) -> "AsyncStream":
        return self

    async def __aexit__(self, *exc: Any) -> None:
        await self.close()

    async def close(self) -> None:
        self.closed = True


class APIStatusError(Exception):
    """What the SDKs raise for a 4xx/5xx answer."""

    def __init__(self, status_code: int, body: Dict[str, Any]) -> None:
        super().__init__(f"Error code: {status_code} - {body}")
        self.status_code = status_code
        self.body = body


class Script:
    """The answers a fake client gives, in order, and the requests it received."""

    def __init__(self, answers: List[Any]) -> None:
        self.answers = list(answers)
        self.requests: List[Dict[str, Any]] = []
        self.returned: List[Any] = []  # every object handed to the caller, to check identity

    def next(self, kwargs: Dict[str, Any]) -> wire.Answer:
        self.requests.append(kwargs)
        answer = self.answers.pop(0)
        if isinstance(answer, Exception):
            raise answer
        return answer


_ping = lambda e: e.get("type") == "ping"  # noqa: E731 - anthropic's SDK drops ping events


# --- OpenAI ----------------------------------------------------------------------------------


class _Completions:
    def __init__(self, script: Script, async_style: Optional[str]) -> None:
        self._script = script
        self._async = async_style

    def _answer(self, kwargs: Dict[str, Any]) -> Any:
        a = self._script.next(kwargs)
        if kwargs.get("stream"):
            usage = bool((kwargs.get("stream_options") or {}).get("include_usage"))
            sse = wire.chat_completion_sse(a, usage)
            return AsyncStream(sse) if self._async else Stream(sse)
        return Model(json.loads(wire.chat_completion_json(a)))


class _Responses(_Completions):
    def _answer(self, kwargs: Dict[str, Any]) -> Any:
        a = self._script.next(kwargs)
        if kwargs.get("stream"):
            sse = wire.response_sse(a)
            return AsyncStream(sse) if self._async else Stream(sse)
        return Model(json.loads(wire.response_json(a)))


def _with_create(cls: type, async_style: Optional[str]) -> type:
    def answer(self: Any, kwargs: Dict[str, Any]) -> Any:
        result = self._answer(kwargs)
        self._script.returned.append(result)
        return result

    if async_style == "async-def":

        async def create(self: Any, **kwargs: Any) -> Any:
            return answer(self, kwargs)

    elif async_style == "coroutine-returning":

        def create(self: Any, **kwargs: Any) -> Any:  # type: ignore[misc]
            async def run() -> Any:
                return answer(self, kwargs)

            return run()

    else:

        def create(self: Any, **kwargs: Any) -> Any:  # type: ignore[misc]
            return answer(self, kwargs)

    return type(cls.__name__, (cls,), {"create": create})


class _Chat:
    def __init__(self, completions: Any) -> None:
        self.completions = completions


class FakeOpenAI:
    """``OpenAI()`` (``async_style=None``) or ``AsyncOpenAI()`` (``"async-def"`` / ``"coroutine-returning"``)."""

    def __init__(self, answers: List[Any], async_style: Optional[str] = None) -> None:
        self.script = Script(answers)
        self.chat = _Chat(_with_create(_Completions, async_style)(self.script, async_style))
        self.responses = _with_create(_Responses, async_style)(self.script, async_style)


# --- Anthropic -------------------------------------------------------------------------------


class MessageStream:
    """``anthropic.MessageStream``: iterates events; ``current_message_snapshot`` is the message so far."""

    def __init__(self, a: wire.Answer) -> None:
        self._answer = a
        self._events = list(parse_sse(wire.anthropic_sse(a)))
        self._seen = 0

    def __iter__(self) -> Iterator[Model]:
        for event in self._events:
            self._seen += 1
            if event.get("type") != "ping":
                yield Model(event)

    @property
    def text_stream(self) -> Iterator[str]:
        for event in self:
            if event.type == "content_block_delta" and event.delta.type == "text_delta":
                yield event.delta.text

    @property
    def current_message_snapshot(self) -> Model:
        # The final message once every event was read (the real SDK accumulates the same).
        if self._seen < len(self._events):
            raise AssertionError("this fake only knows the final snapshot")
        return Model(wire.anthropic_message_obj(self._answer))

    def get_final_message(self) -> Model:
        for _ in self:
            pass
        return self.current_message_snapshot

    def close(self) -> None:
        pass


class AsyncMessageStream(MessageStream):
    async def __aiter__(self) -> Any:  # type: ignore[override]
        for event in MessageStream.__iter__(self):
            yield event

    async def get_final_message(self) -> Model:  # type: ignore[override]
        async for _ in self:
            pass
        return self.current_message_snapshot


class MessageStreamManager:
    def __init__(self, make: Callable[[], MessageStream]) -> None:
        self._make = make
        self._stream: Optional[MessageStream] = None

    def __enter__(self) -> MessageStream:
        self._stream = self._make()
        return self._stream

    def __exit__(self, *exc: Any) -> None:
        if self._stream is not None:
            self._stream.close()


class AsyncMessageStreamManager:
    def __init__(self, make: Callable[[], AsyncMessageStream]) -> None:
        self._make = make

    async def __aenter__(self) -> AsyncMessageStream:
        return self._make()

    async def __aexit__(self, *exc: Any) -> None:
        return None


class _Messages:
    def __init__(self, script: Script, async_style: Optional[str]) -> None:
        self._script = script
        self._async = async_style

    def _answer(self, kwargs: Dict[str, Any]) -> Any:
        a = self._script.next(kwargs)
        if kwargs.get("stream"):
            sse = wire.anthropic_sse(a)
            return AsyncStream(sse, _ping) if self._async else Stream(sse, _ping)
        return Model(json.loads(wire.anthropic_message_json(a)))

    def stream(self, **kwargs: Any) -> Any:
        a = self._script.next(kwargs)
        if self._async:
            return AsyncMessageStreamManager(lambda: AsyncMessageStream(a))
        return MessageStreamManager(lambda: MessageStream(a))


class FakeAnthropic:
    """``Anthropic()`` (``async_style=None``) or ``AsyncAnthropic()`` (``"async-def"``)."""

    def __init__(self, answers: List[Any], async_style: Optional[str] = None) -> None:
        self.script = Script(answers)
        self.messages = _with_create(_Messages, async_style)(self.script, async_style)
