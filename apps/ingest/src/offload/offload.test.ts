// Large requests built on an offload thread (pool.ts, otlp/items.ts buildOtlp): the same messages
// byte for byte as the event loop's own path, tenants served in turn for the threads, and every
// way the pool can fail handing the work back to the door. The doors: offload-doors.test.ts.
import { afterAll, describe, expect, test } from "bun:test";
import fc from "fast-check";
import { createLogger } from "@cellar/shared/logger";
import { encodeRequestFromJson } from "@cellar/shared/otlp/decode";
import { batchMessages, builtMessage } from "../batch-message.ts";
import { type OtlpJob, otlpItems } from "../otlp/items.ts";
import { createOffload, type OffloadThreads } from "./pool.ts";
import { exportArb, KEYS, logsOf, tracesOf } from "./test-requests.ts";

const logger = createLogger("silent");
const WORKER = new URL("./worker.ts", import.meta.url);
const offload = createOffload({ workers: 1, workerUrl: WORKER, minBytes: 1024, logger });
afterAll(() => offload.close());

/** What the event loop's path (handle.ts) builds for the same job: its items, then the publisher's messages. */
async function onTheLoop(job: OtlpJob) {
  const atOnce = async () => {};
  const items = await otlpItems(job.key, job.signal, job.bytes, job.encoding, atOnce);
  const messages = items.inputs.length
    ? (await batchMessages(items.inputs, job.receivedAt, job.maxMessageBytes, atOnce)).map(builtMessage)
    : [];
  return { built: true as const, count: items.count, rejected: items.rejected, reasons: items.reasons, messages };
}

describe("an offload thread builds what the event loop builds", () => {
  test("generated trace and log exports, JSON and protobuf, two kinds of key, small and split messages", async () => {
    // What the generated cases covered: a property that only met empty requests would prove nothing.
    const seen = { stored: 0, refusedSome: 0, split: 0 };
    await fc.assert(
      fc.asyncProperty(
        exportArb,
        fc.constantFrom("traces" as const, "logs" as const),
        fc.constantFrom("json" as const, "protobuf" as const),
        fc.constantFrom(...KEYS),
        fc.constantFrom(4 * 1024 * 1024, 6_000),
        async (resources, signal, encoding, key, maxMessageBytes) => {
          const json = signal === "traces" ? tracesOf(resources) : logsOf(resources);
          const bytes =
            encoding === "json" ? new TextEncoder().encode(JSON.stringify(json)) : encodeRequestFromJson(signal, json);
          const job: OtlpJob = {
            key,
            signal,
            encoding,
            bytes,
            receivedAt: "2026-11-29T03:00:00.000Z",
            maxMessageBytes,
          };
          const loop = await onTheLoop(job);
          const thread = await offload.run(key.tenantId, "otlp", job);
          expect(thread).toEqual(loop);
          if (loop.messages.length) seen.stored++;
          if (loop.rejected) seen.refusedSome++;
          if (loop.messages.length > 1) seen.split++;
        },
      ),
      { numRuns: 60 },
    );
    expect(seen.stored).toBeGreaterThan(10);
    expect(seen.refusedSome).toBeGreaterThan(10);
    expect(seen.split).toBeGreaterThan(3);
  }, 60_000);

  test("an undecodable body is the same OtlpDecodeError message as on the loop", async () => {
    for (const [encoding, body] of [
      ["protobuf", new Uint8Array([0x0a, 0xff, 0xff, 0xff, 0xff, 0x0f, 1, 2])],
      ["json", new TextEncoder().encode('{"resourceSpans": [ {')],
      ["json", new TextEncoder().encode('{"resourceSpans": 7}')],
    ] as const) {
      const job: OtlpJob = {
        key: KEYS[0],
        signal: "traces",
        encoding,
        bytes: body,
        receivedAt: "r",
        maxMessageBytes: 1e6,
      };
      const loop = await onTheLoop(job).then(
        () => "decoded",
        (err: Error) => err.message,
      );
      expect(loop).not.toBe("decoded");
      expect(await offload.run(KEYS[0].tenantId, "otlp", job)).toEqual({ built: false, decodeError: loop });
    }
  });
});

/** Threads that run nothing until told: each job waits for `finish(i)`; `started` records the order. */
function heldThreads() {
  const started: Array<{ data: any; name: string }> = [];
  const pending: Array<{ resolve: (v: unknown) => void; reject: (e: Error) => void }> = [];
  const threads: OffloadThreads = {
    execute(data, name) {
      started.push({ data, name });
      return new Promise((resolve, reject) => pending.push({ resolve, reject }));
    },
    destroy: async () => {},
  };
  const tick = () => new Promise((r) => setTimeout(r, 0));
  return { threads, started, pending, tick };
}

/** A pool over held threads (heldThreads), each job's outcome recorded as "task outcome". */
function heldPool(options: { workers: number; maxWaiting?: number; jobTimeoutMs?: number }) {
  const held = heldThreads();
  const outcomes: string[] = [];
  const pool = createOffload({
    ...options,
    workerUrl: WORKER,
    minBytes: 1,
    logger,
    pool: held.threads,
    observe: (task, outcome) => outcomes.push(`${task} ${outcome}`),
  });
  return { held, pool, outcomes };
}

describe("tenants take turns for the threads", () => {
  test("one job per thread at a time; waiting jobs served one per tenant per round, each tenant's in order", async () => {
    const { held, pool } = heldPool({ workers: 1 });
    const answers: string[] = [];
    const submit = (tenant: string, n: number) =>
      void pool.run(tenant, "ping", { tenant, n } as never).then((v) => answers.push(`${tenant}${n}:${v}`));
    for (let n = 1; n <= 4; n++) submit("F", n);
    submit("V", 1);
    submit("W", 1);
    submit("V", 2);
    expect(held.started.length).toBe(1);
    expect(pool.load()).toEqual({ running: 1, waiting: 6 });
    for (let i = 0; i < 7; i++) {
      held.pending[i].resolve(`done${i}`);
      await held.tick();
    }
    // F's first took the thread at once; then F, V, W in rotation, V's second after F's third.
    expect(held.started.map((s) => `${s.data.tenant}${s.data.n}`)).toEqual(["F1", "F2", "V1", "W1", "F3", "V2", "F4"]);
    expect(answers).toEqual(["F1:done0", "F2:done1", "V1:done2", "W1:done3", "F3:done4", "V2:done5", "F4:done6"]);
    expect(pool.load()).toEqual({ running: 0, waiting: 0 });
    await pool.close();
  });

  test("two threads run two jobs at once", async () => {
    const { held, pool } = heldPool({ workers: 2 });
    for (let n = 0; n < 3; n++) void pool.run("F", "ping", n as never);
    expect(held.started.map((s) => s.data)).toEqual([0, 1]);
    held.pending[1].resolve("x");
    await held.tick();
    expect(held.started.map((s) => s.data)).toEqual([0, 1, 2]);
    await pool.close();
  });
});

describe("when the pool cannot do a job, the door does it", () => {
  test("past maxWaiting a job is handed back at once (undefined), and the waiting ones still run", async () => {
    const { held, pool } = heldPool({ workers: 1, maxWaiting: 2 });
    const runs = [1, 2, 3, 4].map((n) => pool.run("F", "ping", n as never));
    // The first runs, two wait, the fourth is refused a place.
    expect(await runs[3]).toBeUndefined();
    for (let i = 0; i < 3; i++) {
      held.pending[i].resolve(`ok${i}`);
      await held.tick();
    }
    expect(await Promise.all(runs.slice(0, 3))).toEqual(["ok0", "ok1", "ok2"] as never);
    await pool.close();
  });

  test("a job the thread fails, or does not answer in time, is undefined; a closed pool takes none", async () => {
    const { held, pool, outcomes } = heldPool({ workers: 2, jobTimeoutMs: 50 });
    const failed = pool.run("F", "otlp", 1 as never);
    const silent = pool.run("F", "batch", 2 as never);
    held.pending[0].reject(new Error("worker exited"));
    expect(await failed).toBeUndefined();
    expect(await silent).toBeUndefined(); // after jobTimeoutMs
    expect(outcomes).toEqual(["otlp failed", "batch timed_out"]);
    outcomes.length = 0;
    // The silent job's thread stays taken until it answers: the next job waits for the other one.
    const next = pool.run("V", "ping", 3 as never);
    await held.tick();
    expect(held.started.map((s) => s.data)).toEqual([1, 2, 3]);
    held.pending[2].resolve("v" as never);
    expect(await next).toBe("v" as never);
    const waitingAtClose = pool.run("V", "ping", 4 as never); // waits behind the silent job
    await pool.close();
    expect(await waitingAtClose).toBeUndefined();
    expect(await pool.run("V", "otlp", 5 as never)).toBeUndefined();
    // Pings (start-up probes) are not counted; the job refused after close is.
    expect(outcomes).toEqual(["otlp declined"]);
  });

  test("a thread that hangs: its job and every job waiting behind it are given back in time, never stuck", async () => {
    const { held, pool, outcomes } = heldPool({ workers: 1, jobTimeoutMs: 60 });
    const started = performance.now();
    // The thread never answers; three tenants' jobs wait behind the first.
    const jobs = [
      pool.run("F", "otlp", 1 as never),
      pool.run("V", "batch", 2 as never),
      pool.run("W", "otlp", 3 as never),
    ];
    expect(await Promise.all(jobs)).toEqual([undefined, undefined, undefined]);
    expect(performance.now() - started).toBeLessThan(1_000);
    expect(held.started.map((s) => s.data)).toEqual([1]); // the waiting ones never reached the thread
    expect(outcomes.sort()).toEqual(["batch timed_out", "otlp timed_out", "otlp timed_out"]);
    expect(pool.load()).toEqual({ running: 1, waiting: 0 });
    // Once the thread answers, it takes work again.
    held.pending[0].resolve("late" as never);
    await held.tick();
    const after = pool.run("V", "otlp", 4 as never);
    await held.tick();
    held.pending[1].resolve("ok" as never);
    expect(await after).toBe("ok" as never);
    await pool.close();
  });

  test("a real worker that cannot load fails ready() with a reason, within its timeout", async () => {
    const broken = createOffload({
      workers: 1,
      workerUrl: new URL("./no-such-worker.ts", import.meta.url),
      minBytes: 1,
      logger,
    });
    const started = performance.now();
    const err = await broken.ready(2_000).then(
      () => null,
      (e: Error) => e,
    );
    expect(err).toBeInstanceOf(Error);
    expect(performance.now() - started).toBeLessThan(5_000);
    await broken.close();
  });
});
