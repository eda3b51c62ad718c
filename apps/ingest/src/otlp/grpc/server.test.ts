import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import http2 from "node:http2";
import * as grpc from "@grpc/grpc-js";
import protobuf from "protobufjs";
import type { LedgerCounter } from "@cellar/shared/ledger/counter";
import { createLogger } from "@cellar/shared/logger";
import { encodeRequestFromJson } from "@cellar/shared/otlp/decode";
import { fakePipeline } from "../../../test/fake-pipeline.ts";
import { createRefusalPacing, type RefusalPacing } from "../../pacing.ts";
import type { IngestPipeline } from "../../pipeline.ts";
import { bytesMethod, createOtlpGrpcServer, LOGS_EXPORT, TRACE_EXPORT } from "./server.ts";
import { retryDelayOf } from "./status.ts";
import { waitFor } from "../../../../../test/helpers/wait.ts";

// The gRPC door over a pipeline of fakes, called with grpc-js's client (what the OpenTelemetry
// gRPC exporters use). test/e2e-doors.test.ts drives it with the real exporters against the apps
// as processes.

const kv = (key: string, value: string | number) => ({
  key,
  value: typeof value === "number" ? { intValue: String(value) } : { stringValue: value },
});
const ONE_SECOND = { startTimeUnixNano: "1760000000000000000", endTimeUnixNano: "1760000001000000000" };
/** A client span `chat` of trace abab..., id `spanId`; without a model it is refused. */
const modelCall = (spanId: string, model: string | null = "gpt-4o-mini") => ({
  traceId: "ab".repeat(16),
  spanId,
  name: "chat",
  kind: 3,
  ...ONE_SECOND,
  attributes: [
    kv("gen_ai.operation.name", "chat"),
    kv("gen_ai.provider.name", "openai"),
    ...(model ? [kv("gen_ai.request.model", model)] : []),
    kv("gen_ai.usage.input_tokens", 4),
    kv("gen_ai.usage.output_tokens", 2),
  ],
});
const traces = (...spans: unknown[]) =>
  Buffer.from(
    encodeRequestFromJson("traces", {
      resourceSpans: [{ resource: { attributes: [kv("service.name", "notes-app")] }, scopeSpans: [{ spans }] }],
    }),
  );
const logs = () =>
  Buffer.from(
    encodeRequestFromJson("logs", {
      resourceLogs: [
        {
          resource: { attributes: [kv("service.name", "notes-app")] },
          scopeLogs: [
            {
              logRecords: [
                {
                  timeUnixNano: "1760000000000000000",
                  eventName: "parcel.lookup",
                  body: { stringValue: "hello" },
                  attributes: [kv("session.id", "s-1")],
                },
              ],
            },
          ],
        },
      ],
    }),
  );

/** Export*ServiceResponse { ExportPartialSuccess partial_success = 1 { int64 rejected = 1; string error_message = 2 } }. */
function partialSuccess(bytes: Buffer): { rejected: number; message: string } | null {
  const r = protobuf.Reader.create(bytes);
  let out: { rejected: number; message: string } | null = null;
  while (r.pos < r.len) {
    const tag = r.uint32();
    if (tag !== 10) {
      r.skipType(tag & 7);
      continue;
    }
    const p = protobuf.Reader.create(r.bytes());
    out = { rejected: 0, message: "" };
    while (p.pos < p.len) {
      const t = p.uint32();
      if (t === 8) out.rejected = Number(p.int64());
      else if (t === 18) out.message = p.string();
      else p.skipType(t & 7);
    }
  }
  return out;
}

const Client = grpc.makeGenericClientConstructor(
  { traces: bytesMethod(TRACE_EXPORT), logs: bytesMethod(LOGS_EXPORT) } as unknown as grpc.ServiceDefinition,
  "OtlpTest",
);

type Answer = { body?: Buffer; error?: grpc.ServiceError };

function setup(
  opts: Parameters<typeof fakePipeline>[0] & {
    pacing?: RefusalPacing;
    /** Wraps the pipeline's reservations (to watch or hold them). */
    reserve?: (reserve: IngestPipeline["reserveRateTokens"]) => IngestPipeline["reserveRateTokens"];
    /** Wraps the pipeline's turns (to hold them). */
    turn?: (turn: IngestPipeline["turn"]) => IngestPipeline["turn"];
  } = {},
) {
  const fake = fakePipeline({ maxBodyBytes: 16 * 1024, ...opts });
  const reserveRateTokens = opts.reserve?.(fake.pipeline.reserveRateTokens) ?? fake.pipeline.reserveRateTokens;
  const turn = opts.turn?.(fake.pipeline.turn) ?? fake.pipeline.turn;
  /** Each call's method path and the status /v1/* would have answered (the metrics). */
  const observed: Array<[string, number]> = [];
  /** What the door counted in the ledger: [stage, reason, n]. */
  const ledger: Array<[string, string, number]> = [];
  const counter = {
    add: (_t: string, _s: string, stage: string, reason: string, n: number) => ledger.push([stage, reason, n]),
  };
  const server = createOtlpGrpcServer({
    pipeline: { ...fake.pipeline, reserveRateTokens, turn, ledger: counter as unknown as LedgerCounter },
    observe: (path, status) => observed.push([path, status]),
    maxMessageBytes: fake.pipeline.maxBodyBytes,
    logger: createLogger("silent"),
    pacing: opts.pacing,
  });
  let client: grpc.Client & Record<string, Function>;
  let port = 0;
  let calls = 0;
  const call = (signal: "traces" | "logs", message: Buffer, token = "good"): Promise<Answer> =>
    new Promise((resolve) => {
      calls++;
      const metadata = new grpc.Metadata();
      metadata.set("authorization", `Bearer ${token}`);
      client[signal](message, metadata, (error: grpc.ServiceError | null, body: Buffer) =>
        resolve(error ? { error } : { body }),
      );
    });
  return {
    ...fake,
    ledger,
    observed,
    call,
    /** Every call made so far observed by the metrics: a call's end is seen after its answer (the server side's own events, later on a loaded machine). */
    everyCallObserved: () =>
      waitFor(async () => observed.length >= calls, {
        what: `${calls} calls observed`,
        timeoutMs: 10_000,
        intervalMs: 5,
      }),
    port: () => port,
    async start() {
      port = await server.listen(0, "127.0.0.1");
      client = new Client(`127.0.0.1:${port}`, grpc.credentials.createInsecure()) as typeof client;
    },
    async stop() {
      client.close();
      await server.stop();
    },
  };
}

describe("OTLP/gRPC door", () => {
  const door = setup();
  beforeAll(() => door.start());
  afterAll(() => door.stop());

  test("a model-call span is stored, and the answer is an empty ExportTraceServiceResponse", async () => {
    const answer = await door.call("traces", traces(modelCall("01".repeat(8))));
    expect(answer.error).toBeUndefined();
    expect(answer.body!.byteLength).toBe(0);
    expect(door.stored.map((s) => [s.kind, s.serviceName, (s.payload as any).request.model])).toEqual([
      ["trace", "notes-app", "gpt-4o-mini"],
    ]);
  });

  test("log records go through LogsService/Export as events", async () => {
    const before = door.stored.length;
    const answer = await door.call("logs", logs());
    expect(answer.error).toBeUndefined();
    expect(door.stored.slice(before).map((s) => [s.kind, (s.payload as any).name])).toEqual([
      ["event", "parcel.lookup"],
    ]);
  });

  test("a refused span is a partial_success with the rejected count and why; the rest is stored", async () => {
    const before = door.stored.length;
    const answer = await door.call("traces", traces(modelCall("02".repeat(8)), modelCall("03".repeat(8), null)));
    expect(answer.error).toBeUndefined();
    expect(partialSuccess(answer.body!)).toEqual({ rejected: 1, message: expect.stringContaining("1 spans refused") });
    expect(door.stored.length).toBe(before + 1);
  });

  test("a bad token is UNAUTHENTICATED and nothing is stored", async () => {
    const before = door.stored.length;
    const answer = await door.call("traces", traces(modelCall("04".repeat(8))), "wrong");
    expect(answer.error?.code).toBe(grpc.status.UNAUTHENTICATED);
    expect(door.stored.length).toBe(before);
  });

  test("garbage bytes are INVALID_ARGUMENT, and the next call is served", async () => {
    const answer = await door.call("traces", Buffer.from("\xff\xff\xff\xff not protobuf", "latin1"));
    expect(answer.error?.code).toBe(grpc.status.INVALID_ARGUMENT);
    expect(answer.error?.details).toMatch(/protobuf|decode|invalid/i);
    expect((await door.call("logs", logs())).error).toBeUndefined();
  });

  test("a bad token is refused before the message is read: UNAUTHENTICATED even for an oversized one", async () => {
    const big = traces({ ...modelCall("07".repeat(8)), name: "x".repeat(20 * 1024) });
    expect((await door.call("traces", big, "wrong")).error?.code).toBe(grpc.status.UNAUTHENTICATED);
  });

  test("a message over INGEST_MAX_BODY_BYTES is RESOURCE_EXHAUSTED without RetryInfo (not retryable)", async () => {
    const big = traces({ ...modelCall("05".repeat(8)), name: "x".repeat(20 * 1024) });
    const answer = await door.call("traces", big);
    expect(answer.error?.code).toBe(grpc.status.RESOURCE_EXHAUSTED);
    expect(answer.error?.metadata.get("grpc-status-details-bin")).toEqual([]);
    // The call's end (onCancel) runs after the client has its answer.
    await waitFor(async () => door.ledger.some(([stage, reason]) => stage === "refused" && reason === "too_large"), {
      what: "the refusal counted",
      timeoutMs: 10_000,
      intervalMs: 5,
    });
    expect(door.ledger).toContainEqual(["refused", "too_large", 1]);
  });

  test("every call is in the metrics with the status /v1/* would have answered", async () => {
    await door.everyCallObserved(); // a call's end is observed after its answer
    const statuses = new Set(door.observed.map(([, status]) => status));
    expect([...statuses].sort()).toEqual([200, 400, 401, 413]);
    expect(new Set(door.observed.map(([path]) => path))).toEqual(new Set([TRACE_EXPORT, LOGS_EXPORT]));
  });
});

test("past the credential's rate limit: RESOURCE_EXHAUSTED with RetryInfo, before the message is read", async () => {
  const door = setup({ rateLimit: { perSecond: 1, burst: 6 } });
  await door.start();
  try {
    let answer: Answer = {};
    for (let i = 0; i < 10 && !answer.error; i++) answer = await door.call("logs", logs());
    expect(answer.error?.code).toBe(grpc.status.RESOURCE_EXHAUSTED);
    const [details] = answer.error!.metadata.get("grpc-status-details-bin") as Buffer[];
    expect(retryDelayOf(details)).toBeGreaterThanOrEqual(1);
    // An oversized message is refused by the rate limit (RetryInfo), not by its size: unread.
    const big = traces({ ...modelCall("08".repeat(8)), name: "x".repeat(20 * 1024) });
    const refused = (await door.call("traces", big)).error!;
    expect(refused.code).toBe(grpc.status.RESOURCE_EXHAUSTED);
    expect(refused.metadata.get("grpc-status-details-bin")).toHaveLength(1);
    // The ledger counts each refused call once, by reason, beside the items accepted.
    expect(door.ledger.filter(([stage]) => stage === "refused")).toEqual([
      ["refused", "rate_limited", 1],
      ["refused", "rate_limited", 1],
    ]);
    expect(door.ledger.filter(([stage]) => stage === "accepted").length).toBeGreaterThan(0);
  } finally {
    await door.stop();
  }
});

test("a herd's other calls wait for the door's probe before their messages are read, then are refused unread", async () => {
  // Five concurrent calls of one credential, admitted on the estimate of 1: the first is the
  // door's probe (10 spans), the others oversized (grpc-js refuses those by size once it reads
  // them, without RetryInfo). The probe is held after it confirmed until all four others were
  // admitted, so they are in flight while it is counted.
  let admittedOthers = 0;
  let othersIn!: () => void;
  const allIn = new Promise<void>((resolve) => (othersIn = resolve));
  let reservations = 0;
  let probeIn!: () => void;
  const probeAdmitted = new Promise<void>((resolve) => (probeIn = resolve));
  const door = setup({
    rateLimit: { perSecond: 1, burst: 10 },
    reserve: (reserve) => (id, door) => {
      const reservation = reserve(id, door);
      if (reservations++ === 0) {
        probeIn();
        // Held once it confirmed (it is the probe then) until the four others were admitted.
        const confirm = () => reservation.confirm().then(() => allIn);
        return { ...reservation, confirm };
      }
      if (++admittedOthers === 4) othersIn();
      return reservation;
    },
  });
  await door.start();
  try {
    const ten = traces(...Array.from({ length: 10 }, (_, i) => modelCall((i + 1).toString(16).padStart(16, "0"))));
    const big = traces({ ...modelCall("09".repeat(8)), name: "x".repeat(20 * 1024) });
    const probe = door.call("traces", ten);
    await probeAdmitted; // the probe is the first reservation
    const others = await Promise.all([1, 2, 3, 4].map(() => door.call("traces", big)));
    expect((await probe).error).toBeUndefined();
    expect(door.stored.length).toBe(10);
    // Refused by the rate limit (RetryInfo) once the probe was counted, not by their size: unread.
    expect(others.map((a) => [a.error?.code, a.error?.metadata.get("grpc-status-details-bin").length])).toEqual(
      Array(4).fill([grpc.status.RESOURCE_EXHAUSTED, 1]),
    );
  } finally {
    await door.stop();
  }
});

test("a caller back before its RetryInfo's delay gets its next RESOURCE_EXHAUSTED when the delay ends (pacing.ts)", async () => {
  const pacing = createRefusalPacing({ maxHoldMs: 400 });
  const door = setup({ rateLimit: { perSecond: 1, burst: 1 }, now: () => Date.now(), pacing });
  await door.start();
  try {
    const timed = async () => {
      const t0 = performance.now();
      const answer = await door.call("logs", logs());
      return { code: answer.error?.code, ms: performance.now() - t0 };
    };
    expect((await timed()).code).toBeUndefined(); // the one token
    const first = await timed(); // refused for the first time: at once
    expect(first.code).toBe(grpc.status.RESOURCE_EXHAUSTED);
    expect(first.ms).toBeLessThan(300);
    const again = await timed(); // back at once: held until the delay ends (at most 400 ms)
    expect(again.code).toBe(grpc.status.RESOURCE_EXHAUSTED);
    expect(again.ms).toBeGreaterThanOrEqual(350);
  } finally {
    await door.stop();
  }
});

test("gzip-compressed calls (an exporter's compression: gzip) are inflated within the limit: a small bomb is RESOURCE_EXHAUSTED", async () => {
  const door = setup();
  await door.start();
  const gzipClient = new Client(`127.0.0.1:${door.port()}`, grpc.credentials.createInsecure(), {
    "grpc.default_compression_algorithm": 2, // gzip
  }) as unknown as grpc.Client & Record<string, Function>;
  const send = (message: Buffer) =>
    new Promise<string>((resolve) => {
      const metadata = new grpc.Metadata();
      metadata.set("authorization", "Bearer good");
      gzipClient.traces(message, metadata, (err: grpc.ServiceError | null) =>
        resolve(err ? `${grpc.status[err.code]}: ${err.details}` : "OK"),
      );
    });
  try {
    expect(await send(traces(modelCall("09".repeat(8))))).toBe("OK");
    expect(door.stored).toHaveLength(1);
    // 1 MiB of one repeated span name: about 1 KiB on the wire, 64 times the 16 KiB limit inflated.
    const bomb = traces({ ...modelCall("0a".repeat(8)), name: "x".repeat(1024 * 1024) });
    expect(await send(bomb)).toMatch(/^RESOURCE_EXHAUSTED: .*decompresses to a size larger than 16384/);
    expect(door.stored).toHaveLength(1);
  } finally {
    gzipClient.close();
    await door.stop();
  }
});

test("when JetStream did not store the message: UNAVAILABLE with RetryInfo, never success", async () => {
  const door = setup({ failStore: true });
  await door.start();
  try {
    const answer = await door.call("traces", traces(modelCall("06".repeat(8))));
    expect(answer.error?.code).toBe(grpc.status.UNAVAILABLE);
    const [details] = answer.error!.metadata.get("grpc-status-details-bin") as Buffer[];
    expect(retryDelayOf(details)).toBe(5);
  } finally {
    await door.stop();
  }
});

test("a call refused before its message is read ends with a reset: the client stops sending the message", async () => {
  // A raw HTTP/2 client (grpc-js's hides its socket): a 1 MiB message with a bad token. Refused
  // from its metadata, the stream is reset after the status (RST_STREAM NO_ERROR), so at most the
  // flow-control windows of the message go out; without the reset grpc-js drains it, whole.
  const door = setup();
  await door.start();
  const session = http2.connect(`http://127.0.0.1:${door.port()}`);
  try {
    const size = 1024 * 1024;
    const message = Buffer.alloc(5 + size, 0x61);
    message.writeUInt8(0, 0);
    message.writeUInt32BE(size, 1);
    const stream = session.request({
      ":method": "POST",
      ":path": TRACE_EXPORT,
      "content-type": "application/grpc",
      te: "trailers",
      authorization: "Bearer wrong",
    });
    const status = new Promise<unknown>((resolve) => stream.once("response", (h) => resolve(h["grpc-status"])));
    stream.end(message);
    stream.resume();
    await new Promise((resolve) => stream.once("close", resolve));
    expect(await status).toBe(String(grpc.status.UNAUTHENTICATED));
    expect(stream.rstCode).toBe(http2.constants.NGHTTP2_NO_ERROR);
    expect(session.socket.bytesWritten).toBeLessThan(size / 2);
  } finally {
    session.close();
    await door.stop();
  }
});

test("a refusal once the credential is known is answered in its tenant's turn (a flood's refusals come due together)", async () => {
  let held: (() => void) | null = null;
  let hold = false;
  const door = setup({
    rateLimit: { perSecond: 1, burst: 1 },
    turn: (turn) => async (tenant) => {
      if (hold) await new Promise<void>((resolve) => (held = resolve));
      return turn(tenant);
    },
  });
  await door.start();
  try {
    expect((await door.call("logs", logs())).error).toBeUndefined(); // the one token
    hold = true;
    let answered = false;
    const refused = door.call("logs", logs()).then((a) => {
      answered = true;
      return a;
    });
    await waitFor(async () => held !== null, { what: "the refusal waiting for its turn", timeoutMs: 5_000 });
    await Bun.sleep(50);
    expect(answered).toBe(false);
    held!();
    expect((await refused).error?.code).toBe(grpc.status.RESOURCE_EXHAUSTED);
    // Before authentication there is no tenant: a bad token is answered at once.
    expect((await door.call("logs", logs(), "wrong")).error?.code).toBe(grpc.status.UNAUTHENTICATED);
  } finally {
    await door.stop();
  }
});
