"""The wrappers over the official ``openai`` and ``anthropic`` packages, when they are installed.

The provider APIs are a local HTTP server answering with the wire JSON and SSE of tests/wire.py;
the clients are the real packages, so their own parsing, pydantic models, stream classes and
async machinery are what the wrappers see. Skipped (with the reason below) where the packages are
not installed, which is the case on CI: see the README for where they were run.
"""

from __future__ import annotations

import asyncio
import json
import threading
import unittest
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, List

import cellar_sdk as cellar

from . import wire
from .fake_ingest import FakeIngest
from .helpers import client_for, close_clients

try:
    import anthropic
    import openai

    HAVE = True
except ImportError:  # pragma: no cover - CI
    HAVE = False

SKIP_REASON = "official openai/anthropic packages not installed"


class ProviderAPI:
    """Answers /v1/chat/completions, /v1/responses and /v1/messages from a script of wire.Answer."""

    def __init__(self) -> None:
        self.answers: List[Any] = []
        self.requests: List[Any] = []
        outer = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            disable_nagle_algorithm = True

            def log_message(self, *args: Any) -> None:
                pass

            def do_POST(self) -> None:  # noqa: N802
                body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", "0"))))
                outer.requests.append((self.path, body))
                answer = outer.answers.pop(0)
                if isinstance(answer, int):
                    out = json.dumps({"error": {"message": "overloaded", "type": "server_error"}}).encode()
                    self.send_response(answer)
                    self.send_header("Content-Type", "application/json")
                elif body.get("stream"):
                    if self.path.endswith("/chat/completions"):
                        text = wire.chat_completion_sse(answer, bool((body.get("stream_options") or {}).get("include_usage")))
                    elif self.path.endswith("/responses"):
                        text = wire.response_sse(answer)
                    else:
                        text = wire.anthropic_sse(answer)
                    out = text.encode()
                    self.send_response(200)
                    self.send_header("Content-Type", "text/event-stream")
                else:
                    if self.path.endswith("/chat/completions"):
                        out = wire.chat_completion_json(answer).encode()
                    elif self.path.endswith("/responses"):
                        out = wire.response_json(answer).encode()
                    else:
                        out = wire.anthropic_message_json(answer).encode()
                    self.send_response(200)
                    self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(out)))
                self.end_headers()
                self.wfile.write(out)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@unittest.skipUnless(HAVE, SKIP_REASON)
class RealClientsTest(unittest.TestCase):
    def setUp(self) -> None:
        self.api = ProviderAPI()
        self.ingest = FakeIngest()
        self.errors: List[cellar.CellarError] = []
        self.cellar = client_for(self.ingest, self.errors, serverless=True)

    def tearDown(self) -> None:
        close_clients()
        self.ingest.close()
        self.api.close()

    def traces(self) -> List[Any]:
        r = self.cellar.flush(10)
        self.assertEqual((r.refused, r.dropped), (0, 0), self.errors)
        return self.ingest.items("trace")

    def test_openai_sync(self) -> None:
        tool = wire.Answer(tool_calls=[("call_1", "get_weather", {"city": "Paris"})], id="o1")
        text = wire.Answer(text="Sunny and mild.", id="o2", cached_tokens=8)
        self.api.answers = [tool, text, text, tool, 503, 503, 503]
        client = cellar.wrap_openai(openai.OpenAI(api_key="sk-test", base_url=self.api.url + "/v1", max_retries=0), self.cellar)
        with cellar.session("real-openai"):
            first = client.chat.completions.create(model="gpt-4o-mini", messages=[{"role": "user", "content": "Weather?"}])
            self.assertEqual(type(first).__name__, "ChatCompletion")
            stream = client.chat.completions.create(
                model="gpt-4o-mini", messages=[{"role": "user", "content": "Weather?"}], stream=True, stream_options={"include_usage": True}
            )
            self.assertIsInstance(stream, openai.Stream)
            streamed = "".join(c.choices[0].delta.content or "" for c in stream if c.choices)
            resp = client.responses.create(model="gpt-4.1", input="Weather?")
            with client.responses.create(model="gpt-4.1", input="Weather?", stream=True) as events:
                kinds = [e.type for e in events]
            with self.assertRaises(openai.InternalServerError):
                client.chat.completions.create(model="gpt-4o-mini", messages=[{"role": "user", "content": "x"}])
        self.assertEqual(streamed, "Sunny and mild.")
        self.assertEqual(resp.output_text, "Sunny and mild.")
        self.assertEqual(kinds[-1], "response.completed")
        chat, chat_stream, responses, responses_stream = self.traces()
        self.assertEqual(json.loads(chat["responses"][0]["choices"][0]["message"]["tool_calls"][0]["function"]["arguments"]), {"city": "Paris"})
        self.assertEqual(chat_stream["responses"][0]["usage"]["prompt_tokens_details"]["cached_tokens"], 8)
        self.assertEqual(chat_stream["responses"][0]["choices"][0]["message"]["content"], "Sunny and mild.")
        self.assertEqual(responses["responses"][0]["choices"][0]["message"]["content"], "Sunny and mild.")
        self.assertEqual(responses_stream["responses"][0]["choices"][0]["finish_reason"], "tool_calls")

    def test_openai_async(self) -> None:
        self.api.answers = [wire.Answer(text="A.", id="a1"), wire.Answer(text="B.", id="a2")]
        client = cellar.wrap_openai(openai.AsyncOpenAI(api_key="sk-test", base_url=self.api.url + "/v1"), self.cellar)

        async def run() -> str:
            with cellar.session("real-async"):
                one = await client.chat.completions.create(model="gpt-4o-mini", messages=[{"role": "user", "content": "a"}])
                stream = await client.chat.completions.create(model="gpt-4o-mini", messages=[{"role": "user", "content": "b"}], stream=True)
                self.assertIsInstance(stream, openai.AsyncStream)
                two = "".join([c.choices[0].delta.content or "" async for c in stream if c.choices])
                await client.close()
                return one.choices[0].message.content + two

        self.assertEqual(asyncio.run(run()), "A.B.")
        self.assertEqual([t["responses"][0]["choices"][0]["message"]["content"] for t in self.traces()], ["A.", "B."])

    def test_anthropic_sync_and_async(self) -> None:
        # 1-hour cache writes and the tier as the API sends them (usage.cache_creation, usage.service_tier).
        a = wire.Answer(
            text="Hi.",
            tool_calls=[("toolu_1", "lookup", {"q": 1})],
            model="claude-sonnet-4-20250514",
            cached_tokens=100,
            cache_write_tokens=20,
            cache_write_1h_tokens=15,
            service_tier="priority",
            id="m1",
        )
        self.api.answers = [a, a, a, a]
        sync = cellar.wrap_anthropic(anthropic.Anthropic(api_key="x", base_url=self.api.url), self.cellar)
        with cellar.session("real-anthropic"):
            msg = sync.messages.create(model="claude-sonnet-4-20250514", max_tokens=64, messages=[{"role": "user", "content": "q"}])
            self.assertEqual(type(msg).__name__, "Message")
            kinds = [e.type for e in sync.messages.create(model="claude-sonnet-4-20250514", max_tokens=64, messages=[{"role": "user", "content": "q"}], stream=True)]
            with sync.messages.stream(model="claude-sonnet-4-20250514", max_tokens=64, messages=[{"role": "user", "content": "q"}]) as s:
                final = s.get_final_message()
        self.assertEqual(kinds[0], "message_start")
        self.assertEqual(final.content[1].input, {"q": 1})
        aclient = cellar.wrap_anthropic(anthropic.AsyncAnthropic(api_key="x", base_url=self.api.url), self.cellar)

        async def run() -> None:
            with cellar.session("real-anthropic"):
                async with aclient.messages.stream(model="claude-sonnet-4-20250514", max_tokens=64, messages=[{"role": "user", "content": "q"}]) as s:
                    await s.get_final_message()
            await aclient.close()

        asyncio.run(run())
        traces = self.traces()
        self.assertEqual(len(traces), 4)
        for t in traces:
            r = t["responses"][0]
            self.assertEqual(r["usage"]["prompt_tokens"], 100 + 100 + 20)
            self.assertEqual(r["usage"]["prompt_tokens_details"], {"cached_tokens": 100, "cache_creation_tokens": 20, "cache_creation_1h_tokens": 15})
            self.assertEqual(r["service_tier"], "priority")
            self.assertEqual(r["choices"][0]["message"]["content"], "Hi.")
            self.assertEqual(json.loads(r["choices"][0]["message"]["tool_calls"][0]["function"]["arguments"]), {"q": 1})


if __name__ == "__main__":
    unittest.main()
