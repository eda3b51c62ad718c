"""The queue and the sender against a scripted batch door: batching, gzip, retries, refusals, drops."""

from __future__ import annotations

import email.utils
import json
import threading
import time
import unittest
from typing import List

import cellar_sdk as cellar

from .fake_ingest import FakeIngest, accept_all
from .helpers import chat_request, chat_response, client_for, close_clients, wait_for


def send_traces(client: cellar.Client, n: int, session: str = "s", size: int = 0) -> None:
    with cellar.session(session):
        for i in range(n):
            client.trace(request=chat_request(f"q{i}" + "x" * size), responses=[chat_response(f"a{i}")])


class TransportTest(unittest.TestCase):
    def setUp(self) -> None:
        self.ingest = FakeIngest()
        self.errors: List[cellar.CellarError] = []

    def tearDown(self) -> None:
        close_clients()
        self.ingest.close()

    def test_batches_bounded_by_count_and_bytes_and_gzipped_when_it_pays(self) -> None:
        client = client_for(self.ingest, self.errors, max_batch_items=7, max_batch_bytes=4000, serverless=True)
        send_traces(client, 20)
        result = client.flush(10)
        self.assertEqual((result.sent, result.refused, result.dropped, result.pending), (20, 0, 0, 0))
        sizes = [len(r.items) for r in self.ingest.received]
        self.assertEqual(sum(sizes), 20)
        self.assertTrue(all(s <= 7 for s in sizes), sizes)
        big = client_for(self.ingest, self.errors, max_batch_items=100, max_batch_bytes=4000, serverless=True)
        before = len(self.ingest.received)
        send_traces(big, 10, size=1500)
        self.assertEqual(big.flush(10).sent, 10)
        batches = self.ingest.received[before:]
        self.assertGreater(len(batches), 1, "4000-byte batches cannot hold ten 1.5 KB items")
        self.assertTrue(all(r.headers.get("content-encoding") == "gzip" for r in batches))
        self.assertTrue(all(len(r.raw) < 4000 for r in batches))
        prompts = [t["request"]["messages"][0]["content"][:3] for t in self.ingest.items("trace")[-10:]]
        self.assertEqual(prompts, [f"q{i}x"[:3] for i in range(10)], "order kept")

    def test_server_errors_and_429_are_retried_with_retry_after_honoured(self) -> None:
        self.ingest.script = [
            (503, {"Retry-After": "0"}, {"error": "storage unavailable"}),
            (429, {"Retry-After": "1"}, {"error": "rate limit exceeded for this credential"}),
            (408, {}, {"error": "timeout"}),
        ]
        client = client_for(self.ingest, self.errors, serverless=True)
        send_traces(client, 3)
        result = client.flush(30)
        self.assertEqual((result.sent, result.retried, result.refused, result.dropped), (3, 9, 0, 0))
        times = [r.at for r in self.ingest.received]
        self.assertEqual(len(times), 4)
        self.assertGreaterEqual(times[2] - times[1], 1.0, "Retry-After: 1 means at least a second")
        stored = [i["body"]["request"]["messages"][0]["content"] for i in self.ingest.received[-1].items]
        self.assertEqual(stored, ["q0", "q1", "q2"])
        self.assertEqual(self.ingest.received[0].raw, self.ingest.received[-1].raw, "a retry sends the same bytes")
        self.assertEqual([e.kind for e in self.errors], ["retrying"] * 3)
        self.assertEqual([e.status for e in self.errors], [503, 429, 408])

    def test_retry_after_as_an_http_date(self) -> None:
        when = email.utils.formatdate(time.time() + 2, usegmt=True)
        self.ingest.script = [(429, {"Retry-After": when}, {"error": "slow down"})]
        client = client_for(self.ingest, self.errors, serverless=True)
        send_traces(client, 1)
        self.assertEqual(client.flush(30).sent, 1)
        first, second = self.ingest.received
        self.assertGreaterEqual(second.at - first.at, 0.9)

    def test_other_4xx_are_not_retried_and_reported(self) -> None:
        for status in (400, 401, 403, 415):
            with self.subTest(status=status):
                ingest = FakeIngest()
                errors: List[cellar.CellarError] = []
                ingest.default = lambda p, b, s=status: (s, {}, {"error": f"nope {s}"})
                client = client_for(ingest, errors, serverless=True)
                send_traces(client, 4)
                result = client.flush(10)
                self.assertEqual((result.sent, result.refused, result.retried), (0, 4, 0))
                self.assertEqual(len(ingest.received), 1)
                self.assertEqual([(e.kind, e.status, e.count) for e in errors], [("rejected", status, 4)])
                self.assertIn(f"nope {status}", errors[0].message)
                ingest.close()

    def test_per_item_refusals_are_reported_not_retried(self) -> None:
        def some_refused(path: str, body: dict):
            return 200, {}, {
                "status": "partial",
                "items": [
                    {"status": "refused", "error": "invalid body.session_id: too long"} if i % 3 == 1 else {"status": "accepted"}
                    for i, _ in enumerate(body["items"])
                ],
            }

        self.ingest.default = some_refused
        client = client_for(self.ingest, self.errors, serverless=True)
        send_traces(client, 6)
        result = client.flush(10)
        self.assertEqual((result.sent, result.refused, result.retried), (4, 2, 0))
        self.assertEqual(len(self.ingest.received), 1)
        [err] = self.errors
        self.assertEqual((err.kind, err.count), ("refused", 2))
        self.assertIn("items[1]", err.message)
        self.assertIn("body.session_id", err.message)

    def test_413_splits_the_batch_until_items_fit(self) -> None:
        def limit(path: str, body: dict):
            if len(body["items"]) > 2:
                return 413, {}, {"error": "body over 1024 bytes"}
            return accept_all(path, body)

        self.ingest.default = limit
        client = client_for(self.ingest, self.errors, serverless=True)
        send_traces(client, 8)
        result = client.flush(10)
        self.assertEqual((result.sent, result.refused), (8, 0))
        accepted = [len(r.items) for r in self.ingest.received if len(r.items) <= 2]
        self.assertEqual(sum(accepted), 8)
        # Later batches start at the size that fitted: no more 413 round trips.
        before = len(self.ingest.received)
        send_traces(client, 6)
        self.assertEqual(client.flush(10).sent, 6)
        self.assertEqual([len(r.items) for r in self.ingest.received[before:]], [2, 2, 2])

    def test_network_errors_are_retried_until_the_host_answers(self) -> None:
        port = self.ingest.server.server_address[1]
        self.ingest.close()
        client = cellar.Client(
            cellar.build_dsn(f"http://127.0.0.1:{port}", "py-app", "s" * 32),
            backoff_base=0.05,
            backoff_max=0.2,
            flush_interval=0.05,
            flush_at_exit=False,
            on_error=self.errors.append,
        )
        send_traces(client, 5)
        wait_for(lambda: any(e.kind == "retrying" and e.status is None for e in self.errors), "a network retry")
        # The host comes back on the same port: everything queued gets through, once.
        restarted = _serve_on(port)
        try:
            result = client.flush(30)
            self.assertEqual((result.sent, result.dropped, result.pending), (5, 0, 0))
            self.assertGreater(result.retried, 0)
            self.assertEqual(len(restarted.items("trace")), 5)
        finally:
            client.shutdown(1)
            restarted.close()

    def test_retries_are_bounded_and_then_counted_dropped(self) -> None:
        self.ingest.default = lambda p, b: (500, {}, {"error": "boom"})
        client = client_for(self.ingest, self.errors, serverless=True, max_retries=3)
        send_traces(client, 2)
        result = client.flush(30)
        self.assertEqual((result.sent, result.dropped, result.retried), (0, 2, 6))
        self.assertEqual(len(self.ingest.received), 4)
        self.assertEqual(self.errors[-1].kind, "dropped")

    def test_a_full_queue_drops_the_newest_and_reports_it(self) -> None:
        gate = threading.Event()

        def blocked(path: str, body: dict):
            gate.wait(30)
            return accept_all(path, body)

        self.ingest.default = blocked
        client = client_for(self.ingest, self.errors, max_queue_items=10, max_batch_items=5)
        with cellar.session("full"):
            queued = [client.trace(request=chat_request(f"m{i}"), responses=[chat_response("r")]) for i in range(40)]
        # While the sender holds one batch (5) in flight, the queue holds 10 more at most.
        self.assertEqual(queued[:10], [True] * 10)
        kept = queued.count(True)
        self.assertLessEqual(kept, 15)
        gate.set()
        result = client.flush(30)
        self.assertEqual((result.sent, result.dropped), (kept, 40 - kept))
        sent = [t["request"]["messages"][0]["content"] for t in self.ingest.items("trace")]
        self.assertEqual(sent, [f"m{i}" for i in range(40) if queued[i]], "what was queued is sent, in order")
        drops = [e for e in self.errors if e.kind == "dropped"]
        self.assertEqual(sum(e.count for e in drops), 40 - kept)
        client.shutdown(1)

    def test_every_batch_carries_the_ledger_counters_and_a_retry_the_same_figures(self) -> None:
        self.ingest.script = [(503, {"Retry-After": "0"}, {"error": "storage unavailable"})]
        client = client_for(self.ingest, self.errors, serverless=True, max_queue_items=3, sample_rate=0.5)
        sessions = [f"s{i}" for i in range(12)]
        kept = [s for s in sessions if cellar.session_sampled(s, 0.5)]
        for s in sessions:
            client.event("tick", session_id=s)
        client.flush(10)
        first, retry = (r.body["ledger"] for r in self.ingest.received[:2])
        self.assertEqual(first["service_name"], "py-app")
        # A retry sends the same bytes, its report included: the host adds nothing for it (docs/sdks.md).
        self.assertEqual(retry, first)
        self.assertEqual(first["seq"], 1)
        self.assertEqual(
            first["counts"],
            {
                "requested": 12,
                "queue_full": max(0, len(kept) - 3),
                "retries_exhausted": 0,
                "refused": 0,
                "sampled_out": 12 - len(kept),
            },
        )
        self.assertEqual(client.ledger(), first["counts"])
        self.assertLess(len(json.dumps(first)), 250)

    def test_ledger_counts_retries_exhausted_and_refusals_apart(self) -> None:
        self.ingest.script = [
            (200, {}, {"status": "partial", "items": [{"status": "accepted"}, {"status": "refused", "error": "invalid"}]}),
        ]
        client = client_for(self.ingest, self.errors, serverless=True, max_retries=1)
        send_traces(client, 2)
        client.flush(10)
        self.ingest.default = lambda p, b: (500, {}, {"error": "boom"})
        send_traces(client, 3, session="t")
        client.flush(10)
        self.assertEqual(
            client.ledger(),
            {"requested": 5, "queue_full": 0, "retries_exhausted": 3, "refused": 1, "sampled_out": 0},
        )
        # The last request's report already said what the first batch settled.
        self.assertEqual(self.ingest.received[-1].body["ledger"]["counts"]["refused"], 1)

    def test_byte_bound_on_the_queue(self) -> None:
        client = client_for(self.ingest, self.errors, serverless=True, max_queue_bytes=20_000)
        send_traces(client, 30, size=1000)
        result = client.flush(10)
        self.assertEqual(result.sent + result.dropped, 30)
        self.assertGreater(result.dropped, 0)
        self.assertLessEqual(result.sent, 20)

    def test_flush_counts_are_per_flush_and_stats_are_cumulative(self) -> None:
        client = client_for(self.ingest, self.errors)
        send_traces(client, 3)
        self.assertEqual(client.flush(10).sent, 3)
        send_traces(client, 2)
        self.assertEqual(client.flush(10).sent, 2)
        self.assertEqual(client.flush(10).sent, 0)
        self.assertEqual(client.stats().sent, 5)
        client.shutdown(1)

    def test_shutdown_sends_then_refuses_new_items(self) -> None:
        client = client_for(self.ingest, self.errors, flush_interval=60)
        send_traces(client, 4)
        result = client.shutdown(10)
        self.assertEqual(result.sent, 4)
        self.assertFalse(client.trace(request=chat_request("late"), responses=[chat_response("r")]))
        self.assertEqual(len(self.ingest.items("trace")), 4)

    def test_serverless_handler_has_sent_before_it_returns(self) -> None:
        client = client_for(self.ingest, self.errors, serverless=True)

        @client.handler
        def handle(event: dict) -> str:
            with cellar.session(event["id"]):
                client.trace(request=chat_request("hello"), responses=[chat_response("hi")])
            return "done"

        self.assertEqual(handle({"id": "lambda-1"}), "done")
        self.assertEqual([t["session_id"] for t in self.ingest.items("trace")], ["lambda-1"])

    def test_falls_back_to_the_single_doors_when_there_is_no_batch_door(self) -> None:
        def old_host(path: str, body: dict):
            if path == "/raw/batch":
                return 404, {}, {"error": "not found"}
            return 200, {}, {"status": "success"}

        self.ingest.default = old_host
        client = client_for(self.ingest, self.errors, serverless=True)
        send_traces(client, 2)
        with cellar.session("s"):
            client.event("done")
        self.assertEqual(client.flush(10).sent, 3)
        self.assertEqual([r.path for r in self.ingest.received], ["/raw/batch", "/raw/traces", "/raw/traces", "/raw/events"])


def _serve_on(port: int) -> FakeIngest:
    """A FakeIngest bound to a given port (the 'restarted host')."""
    from http.server import ThreadingHTTPServer

    ingest = FakeIngest()
    handler = ingest.server.RequestHandlerClass
    ingest.close()
    ingest.server = ThreadingHTTPServer(("127.0.0.1", port), handler)
    ingest.server.daemon_threads = True
    ingest.thread = threading.Thread(target=ingest.server.serve_forever, daemon=True)
    ingest.thread.start()
    return ingest


if __name__ == "__main__":
    unittest.main()
