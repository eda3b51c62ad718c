"""Against the real service (apps as separate processes), started by test/python-sdk.test.ts.

Skipped unless CELLAR_E2E_DSN is set; the bun test sets it and fails when anything is skipped.
What is checked is read back through the platform API: transcripts, tokens and cost per
session, event and trace counts (stored once), after faults: ingest killed and restarted, 429s,
a full queue, a process exiting right after its last call, a forked worker.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import json
import os
import subprocess
import sys
import textwrap
import time
import unittest
import urllib.error
import urllib.parse
import urllib.request
from typing import Any, Dict, List, Optional, Tuple

import cellar_sdk as cellar

from . import wire
from .fake_providers import FakeAnthropic, FakeOpenAI

ENV = os.environ
E2E = "CELLAR_E2E_DSN" in ENV
SDK = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
RUN = f"{int(time.time() * 1000) % 10**9:x}"  # keeps session ids of reruns apart


def platform(path: str, body: Optional[Dict[str, Any]] = None) -> Tuple[int, Any]:
    url = ENV["CELLAR_E2E_PLATFORM_URL"] + path
    data = json.dumps(body).encode() if body is not None else None
    req = urllib.request.Request(url, data=data, method="POST" if body is not None else "GET")
    req.add_header("Authorization", f"Token {ENV['CELLAR_E2E_PLATFORM_KEY']}")
    if data is not None:
        req.add_header("Content-Type", "application/json")
    try:
        with urllib.request.urlopen(req, timeout=30) as res:
            return res.status, json.loads(res.read())
    except urllib.error.HTTPError as err:
        return err.code, err.read().decode()


def service() -> str:
    return cellar.parse_credential(ENV["CELLAR_E2E_DSN"]).service or ""


def session_path(session_id: str, what: str) -> str:
    return f"/telemetry/otel/sessions/{urllib.parse.quote(service())}/{urllib.parse.quote(session_id)}/{what}"


def eventually(fn: Any, what: str, timeout: float = 120.0) -> Any:
    deadline = time.monotonic() + timeout
    last: Any = None
    while time.monotonic() < deadline:
        try:
            value = fn()
        except Exception as err:  # noqa: BLE001 - reads may fail while the pipeline catches up
            value, last = None, err
        if value:
            return value
        time.sleep(0.25)
    raise AssertionError(f"timed out waiting for {what} (last error: {last!r})")


def complete_transcript(session_id: str) -> Dict[str, Any]:
    def read() -> Optional[Dict[str, Any]]:
        status, body = platform(session_path(session_id, "transcript") + "?limit=500")
        return body if status == 200 and body.get("status") == "complete" else None

    return eventually(read, f"the complete transcript of {session_id}")


def count_of(session_id: str, what: str, expected: int) -> int:
    """Waits until the session shows ``expected`` rows of ``what`` and the pipeline is idle, then counts."""

    def read() -> Optional[int]:
        status, body = platform(session_path(session_id, what))
        if status != 200:
            return None
        rows = body.get("items", body.get(what)) if isinstance(body, dict) else body
        return len(rows) if isinstance(rows, list) and len(rows) >= expected else None

    eventually(read, f"{expected} {what} of {session_id}")
    complete_transcript(session_id)
    status, body = platform(session_path(session_id, what))
    rows = body.get("items", body.get(what)) if isinstance(body, dict) else body
    return len(rows)


def control(action: str) -> Any:
    """Asks test/python-sdk.test.ts to act: ``kill`` / ``start`` ingest, ``poison/on``, ``unbalance`` ..."""
    path = action if "/" in action or action == "unbalance" else f"ingest/{action}"
    req = urllib.request.Request(ENV["CELLAR_E2E_CONTROL_URL"] + f"/{path}", data=b"", method="POST")
    with urllib.request.urlopen(req, timeout=120) as res:
        assert res.status == 200
        return json.loads(res.read())


# --- prices, as docs/otlp.md defines cost (prices.json is the service's own table) -------------

_PRICES = json.load(open(ENV["CELLAR_E2E_PRICES"])) if E2E else {"prices": []}
CANONICAL = {"gpt-4o-mini-2024-07-18": "gpt-4o-mini", "gpt-4.1-2025-04-14": "gpt-4.1", "claude-sonnet-4-20250514": "claude-sonnet-4"}


def cost(model: str, prompt: int, completion: int, cached: int, written: int) -> float:
    name = CANONICAL[model]
    today = dt.date.today().isoformat()
    entry = [p for p in _PRICES["prices"] if p["model"] == name and p["from"] <= today][-1]
    uncached = prompt - cached - written
    usd = (
        uncached * entry["input"]
        + cached * (entry["cachedInput"] if entry["cachedInput"] is not None else entry["input"])
        + written * (entry["cacheWrite"] if entry["cacheWrite"] is not None else entry["input"])
        + completion * entry["output"]
    ) / 1_000_000
    return round(usd, 10)


class Expect:
    """What one session must show: its dialogue, and tokens and cost per model."""

    def __init__(self) -> None:
        self.dialogue: List[Tuple[str, Any]] = []
        self.models: Dict[str, Dict[str, float]] = {}

    def call(self, a: wire.Answer, anthropic: bool = False) -> None:
        prompt = a.prompt_tokens + (a.cached_tokens + a.cache_write_tokens if anthropic else 0)
        m = self.models.setdefault(CANONICAL[a.model], {"calls": 0, "promptTokens": 0, "completionTokens": 0, "cachedTokens": 0, "costUsd": 0.0})
        m["calls"] += 1
        m["promptTokens"] += prompt
        m["completionTokens"] += a.completion_tokens
        m["cachedTokens"] += a.cached_tokens
        m["costUsd"] += cost(a.model, prompt, a.completion_tokens, a.cached_tokens, a.cache_write_tokens if anthropic else 0)


def tool_then_answer(i: int, model: str, anthropic: bool = False) -> Tuple[wire.Answer, wire.Answer]:
    first = wire.Answer(
        tool_calls=[(f"call_{RUN}_{i}", "lookup_order", {"order": f"A-{i}"})],
        model=model,
        prompt_tokens=100 + i,
        completion_tokens=10 + i,
        cached_tokens=(50 * i if anthropic else 2 * i),
        cache_write_tokens=(7 * i if anthropic else 0),
        id=f"{RUN}-{i}-1",
    )
    second = wire.Answer(
        text=f"Order A-{i} ships tomorrow.",
        model=model,
        prompt_tokens=200 + i,
        completion_tokens=20 + i,
        cached_tokens=(64 if not anthropic else 30 * i),
        cache_write_tokens=(3 * i if anthropic else 0),
        id=f"{RUN}-{i}-2",
    )
    return first, second


@unittest.skipUnless(E2E, "needs the running service: run through `npm test -- test/python-sdk.test.ts`")
class EndToEndTest(unittest.TestCase):
    def client(self, **options: Any) -> cellar.Client:
        errors: List[cellar.CellarError] = []
        options.setdefault("flush_at_exit", False)
        client = cellar.Client(ENV["CELLAR_E2E_DSN"], on_error=errors.append, **options)
        client.errors = errors  # type: ignore[attr-defined]
        self.addCleanup(client.shutdown, 5)
        return client

    def test_many_sessions_through_the_wrappers_transcripts_tokens_and_cost_exact(self) -> None:
        client = self.client()
        expected: Dict[str, Expect] = {}
        tool_result = '{"status": "shipped"}'

        def openai_chat(i: int, sid: str) -> None:
            first, second = tool_then_answer(i, "gpt-4o-mini-2024-07-18")
            oa = cellar.wrap_openai(FakeOpenAI([first, second]), client)
            messages: List[Dict[str, Any]] = [{"role": "user", "content": f"Where is order A-{i}?"}]
            with cellar.session(sid):
                reply = oa.chat.completions.create(model="gpt-4o-mini", messages=messages, tools=[])
                call = reply.choices[0].message.tool_calls[0]
                messages.append({"role": "assistant", "content": None, "tool_calls": [{"id": call.id, "type": "function", "function": {"name": call.function.name, "arguments": call.function.arguments}}]})
                messages.append({"role": "tool", "tool_call_id": call.id, "content": tool_result})
                stream = oa.chat.completions.create(model="gpt-4o-mini", messages=messages, stream=True, stream_options={"include_usage": True})
                for _ in stream:
                    pass
            e = expected[sid] = Expect()
            e.call(first)
            e.call(second)
            e.dialogue = [("user", f"Where is order A-{i}?"), ("assistant", second.text)]

        def openai_responses(i: int, sid: str) -> None:
            first, second = tool_then_answer(i, "gpt-4.1-2025-04-14")
            oa = cellar.wrap_openai(FakeOpenAI([first, second]), client)
            with cellar.session(sid):
                events = list(oa.responses.create(model="gpt-4.1", instructions="Be brief.", input=f"Where is order A-{i}?", stream=True))
                call = events[-1].response.output[0]
                oa.responses.create(
                    model="gpt-4.1",
                    instructions="Be brief.",
                    input=[
                        {"role": "user", "content": f"Where is order A-{i}?"},
                        {"type": "function_call", "call_id": call.call_id, "name": call.name, "arguments": call.arguments},
                        {"type": "function_call_output", "call_id": call.call_id, "output": tool_result},
                    ],
                )
            e = expected[sid] = Expect()
            e.call(first)
            e.call(second)
            e.dialogue = [("system", "Be brief."), ("user", f"Where is order A-{i}?"), ("assistant", second.text)]

        def anthropic(i: int, sid: str) -> None:
            first, second = tool_then_answer(i, "claude-sonnet-4-20250514", anthropic=True)
            an = cellar.wrap_anthropic(FakeAnthropic([first, second]), client)
            question = {"role": "user", "content": f"Where is order A-{i}?"}
            with cellar.session(sid):
                blocks = []
                for event in an.messages.create(model="claude-sonnet-4-20250514", max_tokens=256, system="Be brief.", messages=[question], stream=True):
                    if event.type == "content_block_start":
                        blocks.append(event.content_block)
                use = blocks[0]
                follow = [
                    question,
                    {"role": "assistant", "content": [{"type": "tool_use", "id": use.id, "name": use.name, "input": {"order": f"A-{i}"}}]},
                    {"role": "user", "content": [{"type": "tool_result", "tool_use_id": use.id, "content": tool_result}]},
                ]
                with an.messages.stream(model="claude-sonnet-4-20250514", max_tokens=256, system="Be brief.", messages=follow) as s:
                    s.get_final_message()
            e = expected[sid] = Expect()
            e.call(first, anthropic=True)
            e.call(second, anthropic=True)
            e.dialogue = [("system", "Be brief."), ("user", f"Where is order A-{i}?"), ("assistant", second.text)]

        async def async_mix(i: int, sid: str) -> None:
            first, second = tool_then_answer(i, "gpt-4o-mini-2024-07-18")
            oa = cellar.wrap_openai(FakeOpenAI([first, second], "coroutine-returning"), client)
            with cellar.session(sid):
                r1 = await oa.chat.completions.create(model="gpt-4o-mini", messages=[{"role": "user", "content": f"Async A-{i}?"}])
                c = r1.choices[0].message.tool_calls[0]
                await oa.chat.completions.create(
                    model="gpt-4o-mini",
                    messages=[
                        {"role": "user", "content": f"Async A-{i}?"},
                        {"role": "assistant", "content": None, "tool_calls": [{"id": c.id, "type": "function", "function": {"name": c.function.name, "arguments": c.function.arguments}}]},
                        {"role": "tool", "tool_call_id": c.id, "content": tool_result},
                    ],
                )
            e = expected[sid] = Expect()
            e.call(first)
            e.call(second)
            e.dialogue = [("user", f"Async A-{i}?"), ("assistant", second.text)]

        kinds = [openai_chat, openai_responses, anthropic]
        for i in range(12):
            kinds[i % 3](i, f"many-{RUN}-{i}")

        async def concurrently() -> None:
            await asyncio.gather(*(async_mix(i, f"many-{RUN}-{i}") for i in range(12, 16)))

        asyncio.run(concurrently())
        result = client.flush(60)
        self.assertEqual((result.sent, result.refused, result.dropped, result.pending), (32, 0, 0, 0), client.errors)  # type: ignore[attr-defined]

        for sid, e in expected.items():
            with self.subTest(session=sid):
                transcript = complete_transcript(sid)
                items = transcript["items"]
                said = [(it["type"], it["content"]) for it in items if it["type"] in ("system", "user", "assistant")]
                self.assertEqual(said, e.dialogue)
                self.assertEqual([it["type"] for it in items].count("tool_call"), 1)
                self.assertEqual([it["type"] for it in items].count("tool_result"), 1)
                status, costs = platform(session_path(sid, "cost-by-model"))
                self.assertEqual(status, 200, costs)
                got = {m["model"]: m for m in costs["models"]}
                self.assertEqual(set(got), set(e.models))
                for model, want in e.models.items():
                    m = got[model]
                    self.assertEqual(
                        (m["calls"], m["promptTokens"], m["completionTokens"], m["cachedTokens"]),
                        (want["calls"], want["promptTokens"], want["completionTokens"], want["cachedTokens"]),
                    )
                    self.assertAlmostEqual(m["costUsd"], want["costUsd"], places=9)
                self.assertAlmostEqual(costs["totalCostUsd"], sum(w["costUsd"] for w in e.models.values()), places=9)

    def test_ingest_killed_and_restarted_mid_run_everything_flushed_is_stored_once(self) -> None:
        client = self.client(flush_interval=0.05, max_batch_items=10, backoff_base=0.2, backoff_max=2.0, max_retries=200)
        sid = f"restart-{RUN}"
        with cellar.session(sid):
            for i in range(60):
                client.event("step", attributes={"i": i})
                if i == 20:
                    client.flush(30)
                    control("kill")
                time.sleep(0.005)
        retrying = eventually(lambda: [e for e in client.errors if e.kind == "retrying"], "a failed send while ingest is down")  # type: ignore[attr-defined]
        self.assertTrue(retrying)
        control("start")
        result = client.flush(120)
        self.assertEqual((result.pending, result.dropped, result.refused), (0, 0, 0), [e.message for e in client.errors])  # type: ignore[attr-defined]
        self.assertEqual(client.stats().sent, 60)
        self.assertEqual(count_of(sid, "events", 60), 60)
        _, body = platform(session_path(sid, "events"))
        rows = body.get("items", body.get("events")) if isinstance(body, dict) else body
        self.assertEqual(sorted(r["attributes"]["i"] for r in rows), list(range(60)))

    def test_429_from_a_rate_limited_ingest_is_retried_after_retry_after(self) -> None:
        burst = int(ENV["CELLAR_E2E_LIMITED_BURST"])
        errors: List[cellar.CellarError] = []
        client = cellar.Client(
            ENV["CELLAR_E2E_LIMITED_DSN"],
            serverless=True,
            backoff_base=0.01,
            backoff_max=0.02,
            max_batch_items=100,
            flush_at_exit=False,
            on_error=errors.append,
        )
        self.addCleanup(client.shutdown, 5)
        sid = f"limited-{RUN}"
        for i in range(4 * burst):
            client.event("burst", session_id=sid, attributes={"i": i})
        result = client.flush(120)
        self.assertEqual((result.sent, result.dropped, result.refused, result.pending), (4 * burst, 0, 0, 0), errors)
        limited = [e for e in errors if e.kind == "retrying" and e.status == 429]
        self.assertTrue(limited, [e.message for e in errors])
        # Backoff alone would wait at most 0.02 s: every wait of a second or more is Retry-After's.
        self.assertTrue(all((e.retry_in or 0) >= 1.0 for e in limited), [e.retry_in for e in limited])
        self.assertEqual(count_of(sid, "events", 4 * burst), 4 * burst)

    def test_a_full_queue_reports_its_drops_and_sends_what_it_kept(self) -> None:
        client = self.client(serverless=True, max_queue_items=5)
        sid = f"full-{RUN}"
        kept = [client.event("tick", session_id=sid, attributes={"i": i}) for i in range(20)]
        self.assertEqual(kept, [True] * 5 + [False] * 15)
        result = client.flush(60)
        self.assertEqual((result.sent, result.dropped), (5, 15))
        self.assertEqual(sum(e.count for e in client.errors if e.kind == "dropped"), 15)  # type: ignore[attr-defined]
        self.assertEqual(count_of(sid, "events", 5), 5)

    def _python(self, code: str) -> subprocess.CompletedProcess:
        env = {**ENV, "PYTHONPATH": os.pathsep.join([os.path.join(SDK, "src"), SDK]), "CELLAR_DSN": ENV["CELLAR_E2E_DSN"]}
        return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], env=env, capture_output=True, text=True, timeout=180)

    def test_a_process_that_exits_right_after_its_last_call_has_its_data_stored(self) -> None:
        sid = f"exit-{RUN}"
        proc = self._python(
            f"""
            import cellar_sdk as cellar
            from tests import wire
            from tests.fake_providers import FakeOpenAI
            cellar.init(flush_interval=3600)
            openai = cellar.wrap_openai(FakeOpenAI([wire.Answer(text="bye", id="exit")]))
            with cellar.session({sid!r}):
                openai.chat.completions.create(model="gpt-4o-mini", messages=[{{"role": "user", "content": "last words"}}])
            """
        )
        self.assertEqual(proc.returncode, 0, proc.stderr)
        transcript = complete_transcript(sid)
        self.assertEqual([(i["type"], i["content"]) for i in transcript["items"]], [("user", "last words"), ("assistant", "bye")])

    @unittest.skipUnless(hasattr(os, "fork"), "needs fork")
    def test_a_forked_worker_sends_its_own_traces_and_not_the_parents(self) -> None:
        parent, child = f"fork-parent-{RUN}", f"fork-child-{RUN}"
        proc = self._python(
            f"""
            import os
            import cellar_sdk as cellar
            from tests import wire
            from tests.fake_providers import FakeOpenAI
            client = cellar.init(flush_interval=3600)
            openai = cellar.wrap_openai(FakeOpenAI([wire.Answer(text=f"p{{i}}", id=f"p{{i}}") for i in range(3)] + [wire.Answer(text="c", id="c")]))
            with cellar.session({parent!r}):
                for i in range(3):
                    openai.chat.completions.create(model="gpt-4o-mini", messages=[{{"role": "user", "content": f"parent {{i}}"}}])
            assert client.stats().pending == 3
            pid = os.fork()  # as a pre-fork server forks its workers
            if pid == 0:
                with cellar.session({child!r}):
                    openai.chat.completions.create(model="gpt-4o-mini", messages=[{{"role": "user", "content": "child"}}])
                r = cellar.flush(60)
                os._exit(0 if (r.sent, r.pending) == (1, 0) else 7)
            _, status = os.waitpid(pid, 0)
            assert status == 0, status
            r = cellar.flush(60)
            assert (r.sent, r.pending) == (3, 0), r
            """
        )
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertEqual(count_of(parent, "traces", 3), 3)
        self.assertEqual(count_of(child, "traces", 1), 1)


    # Named to run last in this class: the ledger after every fault the tests above caused (ingest
    # killed mid-run, 429s from the rate-limited instance, a full queue), plus a validation
    # refusal and a poison message dead-lettered and replayed here (docs/ledger.md).
    def test_zz_the_ledger_balances_after_every_fault_then_reports_a_deleted_row(self) -> None:
        client = self.client(serverless=True)
        sid = f"ledger-{RUN}"
        # Refused by ingest's validation, item by item: the SDK counts it refused, not retried.
        client.event("bad", session_id=sid, severity_number=99)
        client.event("good", session_id=sid)
        result = client.flush(60)
        self.assertEqual((result.sent, result.refused), (1, 1))
        # A poison message: stored in INGEST, refused by the database, dead-lettered; then replayed.
        control("poison/on")
        try:
            client.event("poison", session_id=sid)
            self.assertEqual(client.flush(60).sent, 1)
            letters = eventually(
                lambda: (lambda r: r[1]["data"] if r[0] == 200 and r[1]["count"] else None)(platform("/dead-letters")),
                "the poison message dead-lettered",
            )
            self.assertEqual([d["kind"] for d in letters], ["event"])
        finally:
            control("poison/off")
        status, replayed = platform("/dead-letters/replay", {})
        self.assertEqual((status, replayed["replayed"]), (200, 1), replayed)
        self.assertEqual(count_of(sid, "events", 2), 2)
        last_send = time.time()

        def books(expect_balanced: bool) -> Optional[Dict[str, Any]]:
            status, body = platform(f"/ledger/{urllib.parse.quote(service())}?window=1h")
            if status != 200 or not body.get("reconciliation"):
                return None
            rec = body["reconciliation"]
            # Every minute up to the last send checked (the reconciliation runs every 2 s here).
            covered = dt.datetime.fromisoformat(rec["to"].replace("Z", "+00:00")).timestamp() > last_send
            return body if covered and rec["balanced"] == expect_balanced else None

        ledger = eventually(lambda: books(True), "the books balanced over every minute of the run", timeout=180)
        t = ledger["totals"]
        print(f"\nledger totals: {json.dumps(t)}", file=sys.stderr)
        self.assertEqual(t["inFlight"], 0, t)
        self.assertGreater(t["sdkRequested"], 0, t)
        self.assertGreaterEqual(t["sdkDropped"]["queue_full"], 15, t)
        self.assertGreaterEqual(t["refused"]["rate_limited"], 1, t)
        self.assertGreaterEqual(t["refused"]["invalid"], 1, t)
        self.assertGreaterEqual(t["deadLettered"], 1, t)
        self.assertGreaterEqual(t["replayed"], 1, t)
        self.assertEqual(t["stored"], sum(t["accepted"].values()) - t["deadLettered"] + t["replayed"], t)
        self.assertGreater(t["accepted"]["batch"], 0, t)
        self.assertEqual(t["loss"], sum(t["sdkDropped"].values()) + sum(t["refused"].values()) + t["deadLettered"] - t["replayed"])

        # The deliberately unbalanced book: a stored trace row deleted behind the service's back.
        self.assertEqual(control("unbalance")["deleted"], 1)
        unbalanced = eventually(lambda: books(False), "the reconciliation reporting the deleted row", timeout=60)
        self.assertEqual(unbalanced["reconciliation"]["problems"], ["1 stored traces have no row"])


if __name__ == "__main__":
    unittest.main()
