"""Configuration, sessions, sampling, masking, truncation, exit and fork behaviour."""

from __future__ import annotations

import asyncio
import copy
import os
import subprocess
import sys
import textwrap
import threading
import unittest
from concurrent.futures import ThreadPoolExecutor
from typing import List

import cellar_sdk as cellar
from cellar_sdk.redact import truncation_marker

from .fake_ingest import FakeIngest
from .helpers import SECRET, chat_request, chat_response, client_for, close_clients

SRC = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "src")


class ConfigTest(unittest.TestCase):
    def test_dsn_alone_configures_endpoint_and_service(self) -> None:
        dsn = cellar.build_dsn("https://ingest.example.com/", "billing-bot", SECRET)
        client = cellar.Client(dsn, flush_at_exit=False)
        self.assertEqual((client.endpoint, client.service), ("https://ingest.example.com", "billing-bot"))
        client.shutdown(0)

    def test_refusals_at_construction(self) -> None:
        cases = {
            "svc-ing-c-abc.def": "client DSN",
            "svc-ing-s-legacyrandom": "endpoint",
            "svc-ing-s-!!!.x": "base64url JSON",
            "cel_tk_abcdef": "endpoint",
            "": "empty",
        }
        for dsn, words in cases.items():
            with self.subTest(dsn=dsn), self.assertRaises(cellar.ConfigError) as caught:
                cellar.Client(dsn, flush_at_exit=False)
            self.assertIn(words, str(caught.exception))
        with self.assertRaises(cellar.ConfigError):
            cellar.Client("cel_tk_abcdef", endpoint="http://x", flush_at_exit=False)  # no service
        with self.assertRaises(cellar.ConfigError):
            cellar.Client(cellar.build_dsn("http://x", "a", SECRET), service="b", flush_at_exit=False)
        legacy = cellar.Client("svc-ing-s-legacyrandom", endpoint="http://ingest:3100", flush_at_exit=False)
        self.assertEqual(legacy.endpoint, "http://ingest:3100")
        legacy.shutdown(0)

    def test_sampling_by_session(self) -> None:
        # The hash's vectors every SDK checks are in test_sampling.py.
        ids = [f"session-{i}" for i in range(2000)]
        kept = [s for s in ids if cellar.session_sampled(s, 0.25)]
        self.assertTrue(400 < len(kept) < 600, len(kept))
        self.assertEqual(kept, [s for s in ids if cellar.sample_hash(s) / 2**32 < 0.25])
        self.assertTrue(cellar.session_sampled("é-ü", 1.0))
        self.assertFalse(cellar.session_sampled("x", 0.0))


class ClientTest(unittest.TestCase):
    def setUp(self) -> None:
        self.ingest = FakeIngest()
        self.errors: List[cellar.CellarError] = []

    def tearDown(self) -> None:
        close_clients()
        self.ingest.close()

    def test_session_context_manager_decorator_threads_and_tasks(self) -> None:
        client = client_for(self.ingest, self.errors, serverless=True)

        def call(label: str) -> None:
            client.trace(request=chat_request(label), responses=[chat_response("ok")])

        @cellar.session("decorated")
        def decorated() -> None:
            call("d")

        async def tasks() -> None:
            with cellar.session("async-parent"):
                await asyncio.gather(asyncio.create_task(asyncio.sleep(0, call("t1"))), asyncio.sleep(0, call("t2")))

        with cellar.session("outer"):
            call("o1")
            with cellar.session("inner"):
                call("i1")
            decorated()
            with ThreadPoolExecutor(2) as pool:
                pool.submit(cellar.bind(call), "bound").result()
                pool.submit(call, "unbound").result()
            thread = threading.Thread(target=cellar.session("thread").bind(call), args=("th",))
            thread.start()
            thread.join()
        asyncio.run(tasks())
        client.flush(10)
        got = {t["request"]["messages"][0]["content"]: t["session_id"] for t in self.ingest.items("trace")}
        self.assertEqual(got["o1"], "outer")
        self.assertEqual(got["i1"], "inner")
        self.assertEqual(got["d"], "decorated")
        self.assertEqual(got["bound"], "outer")
        self.assertTrue(got["unbound"].startswith("auto-"), "a thread does not inherit unless asked")
        self.assertEqual(got["th"], "thread")
        self.assertEqual((got["t1"], got["t2"]), ("async-parent", "async-parent"))

    def test_sampled_out_sessions_send_nothing(self) -> None:
        client = client_for(self.ingest, self.errors, serverless=True, sample_rate=0.3)
        ids = [f"s-{i}" for i in range(200)]
        for sid in ids:
            client.event("e", session_id=sid)
            client.trace(request=chat_request("x"), responses=[chat_response("y")], session_id=sid)
        client.flush(10)
        sent = {i["session_id"] for i in self.ingest.items()}
        self.assertEqual(sent, {s for s in ids if cellar.session_sampled(s, 0.3)})
        self.assertEqual(len(self.ingest.items()), 2 * len(sent))

    def test_mask_hook_redactors_and_truncation(self) -> None:
        seen: List[str] = []

        def mask(kind: str, payload: dict) -> dict:
            seen.append(kind)
            if payload.get("name") == "drop-me":
                return None  # type: ignore[return-value]
            payload.setdefault("attributes", {})["masked"] = True
            return payload

        client = client_for(
            self.ingest, self.errors, serverless=True, mask=mask, redact=["emails", "cards", "secrets"], max_string_chars=1000
        )
        text = "mail jane.doe@example.com card 4242-4242-4242-4242 not 4242-4242-4242-4241 key sk-proj-Abcdefghijklmnopqrstuvwxyz123"
        request = {"model": "gpt-4o-mini", "messages": [{"role": "user", "content": text}, {"role": "user", "content": "y" * 5000}]}
        untouched = copy.deepcopy(request)
        client.trace(request=request, responses=[chat_response("ok")], session_id="jane.doe@example.com")
        client.event("drop-me", session_id="s")
        client.event("kept", session_id="s", body={"note": "call 4111111111111111"})
        self.assertEqual(client.flush(10).sent, 2)
        trace, event = self.ingest.items()
        self.assertEqual(
            trace["request"]["messages"][0]["content"],
            "mail [email] card [card] not 4242-4242-4242-4241 key [secret]",
        )
        self.assertEqual(trace["request"]["messages"][1]["content"], "y" * 1000 + truncation_marker(4000))
        self.assertEqual(trace["session_id"], "jane.doe@example.com", "identifiers are not content")
        self.assertEqual(trace["attributes"], {"masked": True})
        self.assertEqual(event["body"], {"note": "call [card]"})
        self.assertEqual(seen, ["trace", "event", "event"])
        self.assertEqual(request, untouched, "the caller's own objects are never edited")

    def test_an_item_too_large_even_truncated_is_refused_locally(self) -> None:
        client = client_for(self.ingest, self.errors, serverless=True, max_item_bytes=20_000)
        many = [{"role": "user", "content": "z" * 300} for _ in range(200)]
        self.assertFalse(client.trace(request={"model": "m", "messages": many}, responses=[chat_response("r")], session_id="s"))
        fits = [{"role": "user", "content": "z" * 50_000}]
        self.assertTrue(client.trace(request={"model": "m", "messages": fits}, responses=[chat_response("r")], session_id="s"))
        result = client.flush(10)
        self.assertEqual((result.sent, result.refused), (1, 1))
        self.assertEqual(self.errors[0].kind, "refused")
        [sent] = self.ingest.items()
        self.assertIn("[truncated", sent["request"]["messages"][0]["content"])

    def test_nul_and_lone_surrogates_never_reach_the_server(self) -> None:
        client = client_for(self.ingest, self.errors, serverless=True)
        client.event("e", session_id="s", body={"t": "a\x00b", "u": "x\ud800y"})
        client.flush(10)
        [event] = self.ingest.items()
        self.assertEqual(event["body"]["t"], "a\ufffdb")
        self.assertNotIn("\ud800", event["body"]["u"])

    def _run(self, code: str) -> subprocess.CompletedProcess:
        env = {**os.environ, "PYTHONPATH": SRC, "CELLAR_DSN": cellar.build_dsn(self.ingest.url, "py-app", SECRET)}
        return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], env=env, capture_output=True, text=True, timeout=120)

    def test_a_process_that_exits_right_after_its_last_call_has_sent_it(self) -> None:
        proc = self._run(
            """
            import cellar_sdk as cellar
            cellar.init(flush_interval=3600)
            with cellar.session("exit-now"):
                for i in range(25):
                    cellar.event("step", attributes={"i": i})
            """
        )
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertEqual([e["attributes"]["i"] for e in self.ingest.items("event")], list(range(25)))

    @unittest.skipUnless(hasattr(os, "fork"), "needs fork")
    def test_a_forked_child_sends_its_own_items_and_not_the_parents(self) -> None:
        proc = self._run(
            """
            import os
            import cellar_sdk as cellar
            client = cellar.init(flush_interval=3600)
            with cellar.session("parent"):
                for i in range(5):
                    cellar.event("before-fork", attributes={"i": i})
            assert client.stats().pending == 5, client.stats()  # queued, unsent, when the fork happens
            pid = os.fork()
            if pid == 0:
                with cellar.session("child"):
                    cellar.event("in-child")
                r = cellar.flush(30)
                os._exit(0 if (r.sent, r.dropped, r.pending) == (1, 0, 0) else 3)
            with cellar.session("parent"):
                cellar.event("after-fork")
            _, status = os.waitpid(pid, 0)
            r = cellar.flush(30)
            assert status == 0, status
            assert (r.sent, r.pending) == (6, 0), r
            """
        )
        self.assertEqual(proc.returncode, 0, proc.stderr)
        events = self.ingest.items("event")
        names = sorted((e["session_id"], e["name"]) for e in events)
        self.assertEqual(names, sorted([("parent", "before-fork")] * 5 + [("parent", "after-fork"), ("child", "in-child")]))


if __name__ == "__main__":
    unittest.main()
