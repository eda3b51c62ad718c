"""Python SDK bench: the caller's CPU per wrapped call beside the bare call, memory of a full queue.

    python3 bench/python-sdk.py [--calls 20000] [--queued 100000]

Overhead (bare and wrapped calls alternated): the caller thread's CPU time (``time.thread_time_ns``: the sender thread's work is not
counted, it runs on its own thread) of each call of a fake OpenAI client that returns a prebuilt
ChatCompletion at once, bare and wrapped, with a realistic request (a 12-message conversation,
tools). The floor is the bare call measured in the same run. Streams: the whole iteration of a
40-chunk stream, bare and wrapped.

Memory: 100,000 wrapped calls queued in a client that cannot send (serverless mode, nothing
flushed), measured with tracemalloc beside the floor: the same 100,000 responses merely kept in a
list by the caller. Then the same count queued as finished payloads through ``Client.trace``.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import statistics
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "sdks/python/src"))
sys.path.insert(0, os.path.join(ROOT, "sdks/python"))

import cellar_sdk as cellar  # noqa: E402
from tests import wire  # noqa: E402
from tests.fake_ingest import FakeIngest  # noqa: E402
from tests.fake_providers import Model, Stream  # noqa: E402

ANSWER = wire.Answer(text="Your order ships tomorrow; tracking follows by email.", id="bench")
RESPONSE = Model(json.loads(wire.chat_completion_json(ANSWER)))
STREAM_ANSWER = wire.Answer(text=" ".join(["word"] * 38), id="bench")
SSE = wire.chat_completion_sse(STREAM_ANSWER, True)
MESSAGES = [{"role": "system", "content": "You are a support agent for an online shop. " * 4}] + [
    {"role": "user" if i % 2 == 0 else "assistant", "content": f"Message {i}: " + "some text " * 20} for i in range(11)
]
TOOLS = [{"type": "function", "function": {"name": "lookup_order", "parameters": {"type": "object", "properties": {"id": {"type": "string"}}}}}]


class Completions:
    def create(self, **kwargs):
        if kwargs.get("stream"):
            return Stream(SSE)
        return RESPONSE


class Chat:
    def __init__(self) -> None:
        self.completions = Completions()


class Bare:
    def __init__(self) -> None:
        self.chat = Chat()


def per_call_ns(fn, n: int, between=None, chunk: int = 200):
    """Per-call CPU of the calling thread. ``between`` runs untimed every ``chunk`` calls (a flush:
    a real app calls a model a few times per second, so the sender is never thousands behind)."""
    samples = []
    clock = time.thread_time_ns
    for i in range(n):
        if between is not None and i % chunk == 0:
            between()
        t = clock()
        fn()
        samples.append(clock() - t)
    samples.sort()
    return samples


def paired(bare_fn, wrapped_fn, n: int, between=None, chunk: int = 200):
    """Bare and wrapped calls alternated (one each, in turn), so drift on a shared machine hits both."""
    floor, got = [], []
    clock = time.thread_time_ns
    for i in range(n):
        if between is not None and i % chunk == 0:
            between()
        t = clock()
        bare_fn()
        floor.append(clock() - t)
        t = clock()
        wrapped_fn()
        got.append(clock() - t)
    floor.sort()
    got.sort()
    return floor, got


def show(label: str, samples, floor=None) -> None:
    p50 = samples[len(samples) // 2] / 1000
    p99 = samples[int(len(samples) * 0.99)] / 1000
    mean = statistics.fmean(samples) / 1000
    extra = ""
    if floor is not None:
        fp50 = floor[len(floor) // 2] / 1000
        fmean = statistics.fmean(floor) / 1000
        extra = f"   added: p50 {p50 - fp50:7.2f} us, mean {mean - fmean:7.2f} us"
    print(f"  {label:<34} p50 {p50:8.2f} us   p99 {p99:8.2f} us   mean {mean:8.2f} us{extra}")


def overhead(calls: int) -> None:
    ingest = FakeIngest(keep=False)
    dsn = cellar.build_dsn(ingest.url, "bench", "s" * 32)
    bare = Bare()

    def plain_call(c):
        return lambda: c.chat.completions.create(model="gpt-4o-mini", messages=MESSAGES, tools=TOOLS, temperature=0.2)

    def stream_call(c):
        def run():
            for _ in c.chat.completions.create(model="gpt-4o-mini", messages=MESSAGES, stream=True, stream_options={"include_usage": True}):
                pass

        return run

    for serverless in (True, False):
        client = cellar.Client(dsn, flush_at_exit=False, serverless=serverless, max_queue_items=calls * 2)
        wrapped = cellar.wrap_openai(Bare(), client)
        settle = lambda: client.flush(60)  # noqa: E731
        with cellar.session("bench"):
            per_call_ns(plain_call(wrapped), 2000, settle)  # warm-up
            floor, got = paired(plain_call(bare), plain_call(wrapped), calls, settle)
            n = max(500, calls // 20)
            sfloor, sgot = paired(stream_call(bare), stream_call(wrapped), n, settle, 20)
        if serverless:
            print(f"caller-path CPU per call, the sender idle while timed ({calls} calls each, caller thread only):")
        else:
            print("the same with the background sender thread running beside the caller (one GIL, 2 shared cores):")
        show("bare create() [floor]", floor)
        show("wrapped create()", got, floor)
        show("bare 40-chunk stream [floor]", sfloor)
        show("wrapped 40-chunk stream", sgot, sfloor)
        if serverless:
            # The sender's own work (build, mask, encode, send) on this thread: serverless flush.
            with cellar.session("bench"):
                for _ in range(1000):
                    plain_call(wrapped)()
            t = time.thread_time_ns()
            result = client.flush(60)
            per = (time.thread_time_ns() - t) / max(1, result.sent) / 1000
            print(f"  sender thread CPU per trace (build + encode + POST, {result.sent} traces): {per:.0f} us")
        client.shutdown(5)
    ingest.close()


def real_openai(calls: int) -> None:
    """The official client (when installed) against a local API: bare vs wrapped, caller CPU."""
    try:
        import openai
    except ImportError:
        print("official openai package not installed: the real-client comparison is skipped")
        return
    from tests.test_real_clients import ProviderAPI

    api = ProviderAPI()
    api.answers = [STREAM_ANSWER if i % 2 else ANSWER for i in range(calls * 4 + 800)]
    ingest = FakeIngest(keep=False)
    client = cellar.Client(cellar.build_dsn(ingest.url, "bench", "s" * 32), flush_at_exit=False, serverless=True)
    bare = openai.OpenAI(api_key="sk-test", base_url=api.url + "/v1", max_retries=0)
    wrapped = cellar.wrap_openai(openai.OpenAI(api_key="sk-test", base_url=api.url + "/v1", max_retries=0), client)
    settle = lambda: client.flush(60)  # noqa: E731

    def call(c):
        return lambda: c.chat.completions.create(model="gpt-4o-mini", messages=MESSAGES, tools=TOOLS)

    def stream(c):
        def run():
            for _ in c.chat.completions.create(model="gpt-4o-mini", messages=MESSAGES, stream=True, stream_options={"include_usage": True}):
                pass

        return run

    with cellar.session("bench"):
        per_call_ns(call(wrapped), 200, settle)
        per_call_ns(call(bare), 200, settle)
        floor, got = paired(call(bare), call(wrapped), calls, settle)
        sfloor, sgot = paired(stream(bare), stream(wrapped), calls, settle, 20)
    print(f"the official openai {openai.__version__} client over local HTTP ({calls} calls each, alternated, caller thread CPU):")
    show("bare create() [floor]", floor)
    show("wrapped create()", got, floor)
    show("bare 40-chunk stream [floor]", sfloor)
    show("wrapped 40-chunk stream", sgot, sfloor)
    client.shutdown(5)
    api.close()
    ingest.close()


def rss() -> int:
    gc.collect()
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def memory(queued: int) -> None:
    print(f"memory with {queued} traces queued (resident set size growth):")
    base = rss()
    kept = [Model(json.loads(wire.chat_completion_json(ANSWER))) for _ in range(queued)]
    floor = rss() - base
    print(f"  floor: {queued} responses kept by the caller    {floor / 2**20:8.1f} MiB ({floor / queued:6.0f} B each)")
    client = cellar.Client(
        cellar.build_dsn("http://127.0.0.1:9", "bench", "s" * 32), serverless=True, flush_at_exit=False, max_queue_items=queued
    )

    class OneEach:
        i = 0

        def create(self, **kwargs):
            OneEach.i += 1
            return kept[OneEach.i - 1]

    app = Bare()
    app.chat.completions = OneEach()
    wrapped = cellar.wrap_openai(app, client)
    before = rss()
    with cellar.session("bench-memory"):
        for _ in range(queued):
            wrapped.chat.completions.create(model="gpt-4o-mini", messages=MESSAGES, tools=TOOLS)
    used = rss() - before
    print(f"  wrapped calls queued (captures)               {used / 2**20:8.1f} MiB ({used / queued:6.0f} B each, beyond the floor)")
    kept.append(kept[-1])
    wrapped.chat.completions.create(model="gpt-4o-mini", messages=MESSAGES)
    print(f"  pending in the queue: {client.stats().pending}; one call more: {client.stats().dropped} dropped (the bound)")
    client.shutdown(0)
    del kept, wrapped, app
    client2 = cellar.Client(
        cellar.build_dsn("http://127.0.0.1:9", "bench", "s" * 32),
        serverless=True,
        flush_at_exit=False,
        max_queue_items=queued,
        max_queue_bytes=2**40,
    )
    payload = {"model": "gpt-4o-mini", "messages": MESSAGES}
    response = json.loads(wire.chat_completion_json(ANSWER))
    before = rss()
    encoded = min(queued, 20000)
    for _ in range(encoded):
        client2.trace(request=payload, responses=[response], session_id="bench-memory")
    used = (rss() - before) * queued / encoded
    size = len(json.dumps({"request": payload, "responses": [response]}))
    print(f"  finished payloads (encoded JSON; {encoded} measured) {used / 2**20:8.1f} MiB ({used / queued:6.0f} B each; JSON ~{size} B)")
    client2.shutdown(0)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--calls", type=int, default=5000)
    parser.add_argument("--queued", type=int, default=100000)
    args = parser.parse_args()
    print(f"cellar {cellar.__version__}, Python {sys.version.split()[0]}")
    t = time.monotonic()
    overhead(args.calls)
    print(f"  ({time.monotonic() - t:.0f} s)")
    real_openai(max(200, args.calls // 10))
    t = time.monotonic()
    memory(args.queued)
    print(f"  ({time.monotonic() - t:.0f} s)")


if __name__ == "__main__":
    main()
