"""The OpenAI and Anthropic wrappers over fake clients that speak the APIs' wire JSON."""

from __future__ import annotations

import asyncio
import gc
import json
import unittest
from typing import Any, Dict, List

import cellar_sdk as cellar

from . import wire
from .fake_ingest import FakeIngest
from .fake_providers import APIStatusError, FakeAnthropic, FakeOpenAI, Stream
from .helpers import client_for, close_clients

TOOL_ARGS = {"city": "Paris", "unit": "celsius", "days": [1, 2]}


def answers() -> Dict[str, wire.Answer]:
    return {
        "text": wire.Answer(text="Hello there, how can I help?", prompt_tokens=31, completion_tokens=7, cached_tokens=12, id="t1"),
        "tool": wire.Answer(tool_calls=[("call_a1", "get_weather", TOOL_ARGS)], prompt_tokens=80, completion_tokens=19, id="t2"),
        "claude": wire.Answer(
            text="Bonjour.",
            model="claude-sonnet-4-20250514",
            prompt_tokens=9,
            completion_tokens=4,
            cached_tokens=1000,
            cache_write_tokens=200,
            id="c1",
        ),
        "claude_tool": wire.Answer(
            text="Let me look.",
            tool_calls=[("toolu_01", "get_weather", TOOL_ARGS)],
            model="claude-sonnet-4-20250514",
            prompt_tokens=50,
            completion_tokens=30,
            id="c2",
        ),
    }


class WrapperTest(unittest.TestCase):
    def setUp(self) -> None:
        self.ingest = FakeIngest()
        self.errors: List[cellar.CellarError] = []
        self.client = client_for(self.ingest, self.errors, serverless=True)
        self.a = answers()

    def tearDown(self) -> None:
        close_clients()
        self.ingest.close()

    def traces(self) -> List[Dict[str, Any]]:
        result = self.client.flush(10)
        self.assertEqual((result.refused, result.dropped, result.pending), (0, 0, 0), self.errors)
        return self.ingest.items("trace")

    # --- OpenAI chat completions -------------------------------------------------------------

    def test_chat_completion_returns_the_same_object_and_records_the_call(self) -> None:
        openai = cellar.wrap_openai(FakeOpenAI([self.a["text"]]), self.client)
        messages = [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Hi"}]
        with cellar.session("chat-1"):
            result = openai.chat.completions.create(model="gpt-4o-mini", messages=messages, temperature=0.2)
        self.assertIs(result, openai.script.returned[0])
        messages.append({"role": "assistant", "content": result.choices[0].message.content})  # next turn
        [trace] = self.traces()
        self.assertEqual(trace["provider"], "openai")
        self.assertEqual(trace["session_id"], "chat-1")
        self.assertEqual(trace["service_name"], "py-app")
        self.assertEqual(trace["request"]["messages"], messages[:2], "a copy taken at call time")
        self.assertEqual(trace["request"]["temperature"], 0.2)
        [response] = trace["responses"]
        wire_json = json.loads(wire.chat_completion_json(self.a["text"]))
        self.assertEqual(response["id"], wire_json["id"])
        self.assertEqual(response["choices"][0]["message"]["content"], "Hello there, how can I help?")
        self.assertEqual(response["usage"], wire_json["usage"])
        self.assertLessEqual(trace["start_time"], trace["end_time"])

    def test_chat_tool_calls_are_kept(self) -> None:
        openai = cellar.wrap_openai(FakeOpenAI([self.a["tool"]]), self.client)
        tools = [{"type": "function", "function": {"name": "get_weather", "parameters": {"type": "object"}}}]
        with cellar.session("tools"):
            openai.chat.completions.create(model="gpt-4o-mini", messages=[{"role": "user", "content": "Weather?"}], tools=tools)
        [trace] = self.traces()
        self.assertEqual(trace["request"]["tools"], tools)
        choice = trace["responses"][0]["choices"][0]
        self.assertEqual(choice["finish_reason"], "tool_calls")
        [call] = choice["message"]["tool_calls"]
        self.assertEqual((call["id"], call["function"]["name"]), ("call_a1", "get_weather"))
        self.assertEqual(json.loads(call["function"]["arguments"]), TOOL_ARGS)

    def test_chat_stream_is_the_same_stream_and_is_assembled(self) -> None:
        bare = list(Stream(wire.chat_completion_sse(self.a["tool"], True)))
        openai = cellar.wrap_openai(FakeOpenAI([self.a["tool"], self.a["text"]]), self.client)
        with cellar.session("stream"):
            stream = openai.chat.completions.create(
                model="gpt-4o-mini", messages=[{"role": "user", "content": "x"}], stream=True, stream_options={"include_usage": True}
            )
            self.assertIs(stream, openai.script.returned[0])
            self.assertIsInstance(stream, Stream)
            chunks = [c for c in stream]
            with openai.chat.completions.create(model="gpt-4o-mini", messages=[{"role": "user", "content": "y"}], stream=True) as s2:
                text = "".join(getattr(c.choices[0].delta, "content", None) or "" for c in s2 if c.choices)
        self.assertEqual(chunks, bare, "the caller sees exactly the chunks the bare stream yields")
        self.assertEqual(text, "Hello there, how can I help?")
        first, second = self.traces()
        [call] = first["responses"][0]["choices"][0]["message"]["tool_calls"]
        self.assertEqual(json.loads(call["function"]["arguments"]), TOOL_ARGS)
        self.assertEqual(first["responses"][0]["usage"]["prompt_tokens"], 80)
        self.assertEqual(first["responses"][0]["usage"]["completion_tokens"], 19)
        self.assertEqual(second["responses"][0]["choices"][0]["message"]["content"], "Hello there, how can I help?")
        self.assertEqual(second["responses"][0]["choices"][0]["finish_reason"], "stop")
        # Without stream_options.include_usage the API sends no counts: zeros, marked unreported.
        self.assertEqual(second["responses"][0]["usage"], {"prompt_tokens": 0, "completion_tokens": 0, "total_tokens": 0, "unreported": True})

    def test_a_stream_left_early_is_recorded_with_what_was_read(self) -> None:
        openai = cellar.wrap_openai(FakeOpenAI([self.a["text"]]), self.client)
        with cellar.session("early"):
            stream = openai.chat.completions.create(model="m", messages=[{"role": "user", "content": "x"}], stream=True)
            for chunk in stream:
                if chunk.choices and chunk.choices[0].delta.content == " there,":
                    break
            del stream, chunk
            gc.collect()
        [trace] = self.traces()
        self.assertEqual(trace["responses"][0]["choices"][0]["message"]["content"], "Hello there,")
        self.assertIsNone(trace["responses"][0]["choices"][0]["finish_reason"])

    def test_errors_are_raised_unchanged_and_nothing_is_recorded(self) -> None:
        boom = APIStatusError(429, {"error": {"message": "Rate limit reached", "type": "requests"}})
        openai = cellar.wrap_openai(FakeOpenAI([boom]), self.client)
        with self.assertRaises(APIStatusError) as caught:
            openai.chat.completions.create(model="m", messages=[{"role": "user", "content": "x"}])
        self.assertIs(caught.exception, boom)
        self.assertEqual(self.traces(), [])

    def test_cellar_trouble_never_reaches_the_caller(self) -> None:
        def broken_mask(kind: str, payload: dict) -> dict:
            raise RuntimeError("mask bug")

        client = client_for(self.ingest, self.errors, serverless=True, mask=broken_mask)
        openai = cellar.wrap_openai(FakeOpenAI([self.a["text"], object()]), client)
        result = openai.chat.completions.create(model="m", messages=[{"role": "user", "content": "x"}])
        self.assertIs(result, openai.script.returned[0])
        flushed = client.flush(10)
        self.assertEqual((flushed.sent, flushed.dropped), (0, 1))
        self.assertIn("mask bug", self.errors[-1].message)
        # An unreachable ingest host: the call still returns at once.
        dead = cellar.Client(cellar.build_dsn("http://127.0.0.1:9", "py-app", "s" * 32), flush_at_exit=False, max_retries=0)
        again = cellar.wrap_openai(FakeOpenAI([self.a["text"]]), dead)
        self.assertIs(again.chat.completions.create(model="m", messages=[]), again.script.returned[0])
        dead.shutdown(0.1)

    def test_a_mask_that_edits_in_place_never_edits_the_callers_messages(self) -> None:
        def scrub(kind: str, payload: dict) -> dict:
            for m in payload["request"]["messages"]:
                m["content"] = "[scrubbed]"
            return payload

        client = client_for(self.ingest, self.errors, serverless=True, mask=scrub)
        openai = cellar.wrap_openai(FakeOpenAI([self.a["text"]]), client)
        messages = [{"role": "user", "content": "my secret"}]
        openai.chat.completions.create(model="m", messages=messages)
        client.flush(10)
        self.assertEqual(messages, [{"role": "user", "content": "my secret"}])
        [trace] = self.ingest.items("trace")
        self.assertEqual(trace["request"]["messages"], [{"role": "user", "content": "[scrubbed]"}])

    def test_without_a_cellar_client_the_wrapper_passes_through(self) -> None:
        self.assertIsNone(cellar.get_client())
        openai = cellar.wrap_openai(FakeOpenAI([self.a["text"]]))
        result = openai.chat.completions.create(model="m", messages=[{"role": "user", "content": "x"}])
        self.assertIs(result, openai.script.returned[0])

    def test_wrapping_twice_records_once(self) -> None:
        openai = cellar.wrap_openai(cellar.wrap_openai(FakeOpenAI([self.a["text"]]), self.client), self.client)
        openai.chat.completions.create(model="m", messages=[{"role": "user", "content": "x"}])
        self.assertEqual(len(self.traces()), 1)

    # --- OpenAI Responses API ----------------------------------------------------------------

    def test_responses_api_is_mapped_into_the_trace_shape(self) -> None:
        a = wire.Answer(text="It is sunny.", prompt_tokens=120, completion_tokens=40, cached_tokens=64, reasoning_tokens=16, id="r2")
        openai = cellar.wrap_openai(FakeOpenAI([self.a["tool"], a]), self.client)
        tools = [{"type": "function", "name": "get_weather", "description": "Weather", "parameters": {"type": "object"}}]
        with cellar.session("responses"):
            first = openai.responses.create(model="gpt-4.1", instructions="Be kind.", input="Weather in Paris?", tools=tools)
            self.assertIs(first, openai.script.returned[0])
            call = first.output[0]
            followup = [
                {"role": "user", "content": [{"type": "input_text", "text": "Weather in Paris?"}]},
                {"type": "function_call", "call_id": call.call_id, "name": call.name, "arguments": call.arguments},
                {"type": "function_call_output", "call_id": call.call_id, "output": '{"sky": "clear"}'},
            ]
            openai.responses.create(model="gpt-4.1", instructions="Be kind.", input=followup, tools=tools)
        one, two = self.traces()
        self.assertEqual(one["request"]["messages"], [{"role": "system", "content": "Be kind."}, {"role": "user", "content": "Weather in Paris?"}])
        self.assertEqual(one["request"]["tools"][0]["function"]["name"], "get_weather")
        self.assertEqual((one["request"]["api"], one["responses"][0]["source_object"]), ("responses", "response"))
        r1 = one["responses"][0]
        self.assertEqual((r1["object"], r1["id"], r1["choices"][0]["finish_reason"]), ("chat.completion", "resp_t2", "tool_calls"))
        [tc] = r1["choices"][0]["message"]["tool_calls"]
        self.assertEqual((tc["id"], json.loads(tc["function"]["arguments"])), ("call_a1", TOOL_ARGS))
        self.assertEqual(r1["usage"]["prompt_tokens"], 80)
        self.assertEqual(
            two["request"]["messages"],
            [
                {"role": "system", "content": "Be kind."},
                {"role": "user", "content": "Weather in Paris?"},
                {"role": "assistant", "content": None, "tool_calls": [{"id": "call_a1", "type": "function", "function": {"name": "get_weather", "arguments": json.dumps(TOOL_ARGS, separators=(",", ":"))}}]},
                {"role": "tool", "tool_call_id": "call_a1", "content": '{"sky": "clear"}'},
            ],
        )
        r2 = two["responses"][0]
        self.assertEqual(r2["choices"][0]["message"]["content"], "It is sunny.")
        self.assertEqual(
            r2["usage"],
            {
                "prompt_tokens": 120,
                "completion_tokens": 40,
                "total_tokens": 160,
                "prompt_tokens_details": {"cached_tokens": 64},
                "completion_tokens_details": {"reasoning_tokens": 16},
            },
        )

    def test_responses_stream(self) -> None:
        openai = cellar.wrap_openai(FakeOpenAI([self.a["text"]]), self.client)
        with cellar.session("rs"):
            stream = openai.responses.create(model="gpt-4.1", input="Hi", stream=True)
            types = [e.type for e in stream]
        self.assertEqual(types[0], "response.created")
        self.assertEqual(types[-1], "response.completed")
        [trace] = self.traces()
        r = trace["responses"][0]
        self.assertEqual(r["choices"][0]["message"]["content"], "Hello there, how can I help?")
        self.assertEqual((r["usage"]["prompt_tokens"], r["usage"]["completion_tokens"]), (31, 7))

    # --- async ---------------------------------------------------------------------------------

    def test_async_clients_of_both_kinds(self) -> None:
        for style in ("async-def", "coroutine-returning"):
            with self.subTest(style=style):
                ingest_before = len(self.ingest.items("trace"))
                openai = cellar.wrap_openai(FakeOpenAI([self.a["text"], self.a["tool"], self.a["text"]], style), self.client)

                async def run() -> List[Any]:
                    async def turn(sid: str, **kw: Any) -> Any:
                        with cellar.session(sid):
                            return await openai.chat.completions.create(model="m", messages=[{"role": "user", "content": sid}], **kw)

                    plain, tool = await asyncio.gather(turn("a1"), turn("a2"))
                    with cellar.session("a3"):
                        stream = await openai.responses.create(model="m", input="x", stream=True)
                        events = [e async for e in stream]
                    return [plain, tool, events]

                plain, tool, events = asyncio.run(run())
                self.assertIs(plain, openai.script.returned[0])
                self.assertEqual(events[-1].type, "response.completed")
                got = {t["session_id"]: t for t in self.ingest.items("trace")[ingest_before:] + self._flush_new(ingest_before)}
                self.assertEqual(set(got), {"a1", "a2", "a3"})
                self.assertEqual(got["a3"]["responses"][0]["usage"]["prompt_tokens"], 31)

    def _flush_new(self, before: int) -> List[Dict[str, Any]]:
        self.client.flush(10)
        return self.ingest.items("trace")[before:]

    # --- Anthropic -----------------------------------------------------------------------------

    def test_anthropic_message_with_cache_and_tool_use_in_the_chat_shape(self) -> None:
        anthropic = cellar.wrap_anthropic(FakeAnthropic([self.a["claude"], self.a["claude_tool"]]), self.client)
        with cellar.session("claude"):
            msg = anthropic.messages.create(
                model="claude-sonnet-4-20250514",
                max_tokens=1024,
                system=[{"type": "text", "text": "You are terse.", "cache_control": {"type": "ephemeral"}}],
                messages=[{"role": "user", "content": "Hi"}],
            )
            self.assertIs(msg, anthropic.script.returned[0])
            anthropic.messages.create(
                model="claude-sonnet-4-20250514",
                max_tokens=1024,
                tools=[{"name": "get_weather", "description": "Weather", "input_schema": {"type": "object"}}],
                messages=[
                    {"role": "user", "content": "Weather?"},
                    {"role": "assistant", "content": [{"type": "tool_use", "id": "toolu_00", "name": "get_weather", "input": {"city": "Oslo"}}]},
                    {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_00", "content": "cold"}, {"type": "text", "text": "And Paris?"}]},
                ],
            )
        one, two = self.traces()
        self.assertEqual(one["provider"], "openai")
        self.assertEqual(one["request"]["model"], "claude-sonnet-4-20250514")
        self.assertEqual(one["request"]["api"], "anthropic.messages")
        self.assertEqual(one["responses"][0]["source_object"], "anthropic.message")
        self.assertEqual(one["request"]["messages"], [{"role": "system", "content": "You are terse."}, {"role": "user", "content": "Hi"}])
        r = one["responses"][0]
        self.assertEqual((r["model"], r["choices"][0]["message"]["content"], r["choices"][0]["finish_reason"]), ("claude-sonnet-4-20250514", "Bonjour.", "stop"))
        self.assertEqual(
            r["usage"],
            {
                "prompt_tokens": 9 + 1000 + 200,
                "completion_tokens": 4,
                "total_tokens": 1213,
                "prompt_tokens_details": {"cached_tokens": 1000, "cache_creation_tokens": 200},
            },
        )
        self.assertEqual(
            two["request"]["messages"],
            [
                {"role": "user", "content": "Weather?"},
                {"role": "assistant", "content": None, "tool_calls": [{"id": "toolu_00", "type": "function", "function": {"name": "get_weather", "arguments": '{"city":"Oslo"}'}}]},
                {"role": "tool", "tool_call_id": "toolu_00", "content": "cold"},
                {"role": "user", "content": "And Paris?"},
            ],
        )
        self.assertEqual(two["request"]["tools"][0]["function"]["parameters"], {"type": "object"})
        m = two["responses"][0]["choices"][0]
        self.assertEqual((m["finish_reason"], m["message"]["content"]), ("tool_calls", "Let me look."))
        self.assertEqual(json.loads(m["message"]["tool_calls"][0]["function"]["arguments"]), TOOL_ARGS)

    def test_pricing_reads_the_1_hour_cache_writes_and_the_service_tier(self) -> None:
        # Anthropic's usage.cache_creation.ephemeral_1h_input_tokens and usage.service_tier, and the
        # Responses API's service_tier, reach the trace in Cellar's names (docs/pricing.md, "Rates").
        claude = wire.Answer(
            text="Done.",
            model="claude-sonnet-4-5-20250929",
            prompt_tokens=50_000,
            completion_tokens=1_000,
            cached_tokens=20_000,
            cache_write_tokens=250_000,
            cache_write_1h_tokens=200_000,
            service_tier="priority",
            id="c3",
        )
        flex = wire.Answer(text="Hi.", model="gpt-5-2025-08-07", prompt_tokens=2_000, completion_tokens=100, service_tier="flex", id="r3")
        anthropic = cellar.wrap_anthropic(FakeAnthropic([claude, claude]), self.client)
        openai = cellar.wrap_openai(FakeOpenAI([flex]), self.client)
        with cellar.session("prices"):
            anthropic.messages.create(model="claude-sonnet-4-5-20250929", max_tokens=10, messages=[{"role": "user", "content": "x"}])
            for _ in anthropic.messages.create(model="claude-sonnet-4-5-20250929", max_tokens=10, messages=[{"role": "user", "content": "x"}], stream=True):
                pass
            openai.responses.create(model="gpt-5", service_tier="flex", input="Hi")
        created, streamed, response = self.traces()
        for t in (created, streamed):
            r = t["responses"][0]
            self.assertEqual(r["service_tier"], "priority")
            self.assertEqual(
                r["usage"]["prompt_tokens_details"],
                {"cached_tokens": 20_000, "cache_creation_tokens": 250_000, "cache_creation_1h_tokens": 200_000},
            )
            self.assertEqual(r["usage"]["prompt_tokens"], 320_000)
        self.assertEqual(response["responses"][0]["service_tier"], "flex")

    def test_anthropic_streams_raw_and_helper_sync_and_async(self) -> None:
        anthropic = cellar.wrap_anthropic(FakeAnthropic([self.a["claude_tool"], self.a["claude"]]), self.client)
        with cellar.session("claude-stream"):
            stream = anthropic.messages.create(model="claude-sonnet-4-20250514", max_tokens=10, messages=[{"role": "user", "content": "x"}], stream=True)
            kinds = [e.type for e in stream]
            with anthropic.messages.stream(model="claude-sonnet-4-20250514", max_tokens=10, messages=[{"role": "user", "content": "y"}]) as s:
                text = "".join(s.text_stream)
        self.assertEqual(kinds[0], "message_start")
        self.assertNotIn("ping", kinds)
        self.assertEqual(text, "Bonjour.")
        raw, helper = self.traces()
        m = raw["responses"][0]
        self.assertEqual(m["choices"][0]["message"]["content"], "Let me look.")
        self.assertEqual(json.loads(m["choices"][0]["message"]["tool_calls"][0]["function"]["arguments"]), TOOL_ARGS)
        self.assertEqual((m["usage"]["prompt_tokens"], m["usage"]["completion_tokens"]), (50, 30))
        self.assertEqual(helper["responses"][0]["usage"]["prompt_tokens"], 1209)

        aclient = cellar.wrap_anthropic(FakeAnthropic([self.a["claude"], self.a["claude_tool"]], "async-def"), self.client)

        async def run() -> str:
            with cellar.session("claude-async"):
                msg = await aclient.messages.create(model="claude-sonnet-4-20250514", max_tokens=5, messages=[{"role": "user", "content": "a"}])
                async with aclient.messages.stream(model="claude-sonnet-4-20250514", max_tokens=5, messages=[{"role": "user", "content": "b"}]) as s:
                    final = await s.get_final_message()
                return msg.content[0].text + "|" + final.content[0].text

        self.assertEqual(asyncio.run(run()), "Bonjour.|Let me look.")
        self.client.flush(10)
        tail = [t for t in self.ingest.items("trace") if t["session_id"] == "claude-async"]
        self.assertEqual([t["responses"][0]["choices"][0]["message"]["content"] for t in tail], ["Bonjour.", "Let me look."])


if __name__ == "__main__":
    unittest.main()
