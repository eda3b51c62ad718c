import { afterAll, beforeAll, expect, test } from "bun:test";
import fc from "fast-check";
import { bootstrapTenant } from "@cellar/shared/admin/tenancy";
import { ingestStream } from "@cellar/shared/nats/catalogue";
import { consumerBacklog } from "@cellar/shared/nats/consume/lanes";
import type { DeadLetterInfo } from "@cellar/shared/nats/consume";
import { parseJsonStrict } from "../apps/ingest/src/body";
import { validateEvent, validateTrace } from "../apps/ingest/src/validate";
import { createTestStack, waitFor, type TestStack } from "./helpers/stack";

/**
 * Property: every body ingest answers 200 lands in Postgres, and none fails in the processor
 * (issue 10). Valid and hostile traces and events are generated with fast-check, posted to the
 * ingest app in-process (as the other tests do), and written by a real processor in batches.
 * FUZZ_SEED reproduces a run; FUZZ_RUNS changes its size (default 10,000 bodies).
 */
const RUNS = Number(process.env.FUZZ_RUNS ?? 10_000);
const SEED = Number(process.env.FUZZ_SEED ?? Date.now() % 2 ** 31);

let stack: TestStack;
let tenant: Awaited<ReturnType<typeof bootstrapTenant>>;
const dead: DeadLetterInfo[] = [];

beforeAll(async () => {
  stack = await createTestStack({ windowSeconds: 3600, startProcessor: false });
  await stack.startProcessor({ consume: { onDeadLetter: (d) => void dead.push(d) } });
  tenant = await bootstrapTenant(stack.database.db, { name: "fuzz" });
});
afterAll(() => stack.stop());

// --- generators ----------------------------------------------------------------------------
/** Code points a client can send in JSON: any, plus NUL, controls and unpaired surrogates. */
const hostileUnit = fc.oneof(
  { weight: 8, arbitrary: fc.string({ unit: "binary", minLength: 1, maxLength: 1 }) },
  {
    weight: 1,
    arbitrary: fc.constantFrom("\u0000", "\u001f", "\u007f", "\ud800", "\udfff", "\ud83d", "\u2028", "\ufeff"),
  },
);
const text = (maxLength = 24) =>
  fc.oneof(
    { weight: 30, arbitrary: fc.string({ maxLength }) },
    { weight: 1, arbitrary: fc.string({ unit: hostileUnit, maxLength }) },
  );
const pad = (n: number, w = 2) => String(n).padStart(w, "0");

/** ISO-looking timestamps around every edge: offsets, years, leap seconds, 24:00, long fractions. */
const timestamp = fc.oneof(
  {
    weight: 12,
    arbitrary: fc
      .date({ min: new Date("1990-01-01T00:00:00Z"), max: new Date("2040-01-01T00:00:00Z"), noInvalidDate: true })
      .map((d) => d.toISOString()),
  },
  {
    weight: 5,
    arbitrary: fc
      .record({
        y: fc.oneof(
          fc.integer({ min: 0, max: 9999 }),
          fc.constantFrom(0, 1, 13, 99, 100, 101, 999, 1969, 1970, 2026, 9999),
        ),
        mo: fc.integer({ min: 0, max: 13 }),
        d: fc.integer({ min: 0, max: 32 }),
        h: fc.oneof(fc.integer({ min: 0, max: 23 }), fc.constantFrom(24, 25)),
        mi: fc.oneof(fc.integer({ min: 0, max: 59 }), fc.constant(60)),
        s: fc.option(fc.oneof(fc.integer({ min: 0, max: 59 }), fc.constantFrom(60, 61)), { nil: undefined }),
        frac: fc.option(fc.string({ unit: fc.constantFrom("0", "1", "5", "9"), minLength: 1, maxLength: 11 }), {
          nil: undefined,
        }),
        zone: fc.oneof(
          fc.constantFrom("Z", "z", "", "+00:00", "-00:00"),
          fc
            .record({
              sign: fc.constantFrom("+", "-"),
              oh: fc.integer({ min: 0, max: 30 }),
              om: fc.integer({ min: 0, max: 61 }),
              colon: fc.boolean(),
            })
            .map(({ sign, oh, om, colon }) => `${sign}${pad(oh)}${colon ? ":" : ""}${pad(om)}`),
        ),
        sep: fc.constantFrom("T", "T", "T", "t", " "),
      })
      .map(
        ({ y, mo, d, h, mi, s, frac, zone, sep }) =>
          `${pad(y, 4)}-${pad(mo)}-${pad(d)}${sep}${pad(h)}:${pad(mi)}${s === undefined ? "" : `:${pad(s)}${frac ? `.${frac}` : ""}`}${zone}`,
      ),
  },
  { weight: 1, arbitrary: text(40) },
);
/** Integers and numbers around the column types (int4, tokens) and beyond. */
const number = fc.oneof(
  fc.integer({ min: 0, max: 100_000 }),
  fc.constantFrom(-1, 0, 2_147_483_647, 2_147_483_648, 2 ** 53, -(2 ** 31), 1e21, 0.5, -0),
  fc.double({ noNaN: true, noDefaultInfinity: true }),
);
/** Free-form JSON, sometimes deep. */
const freeJson: fc.Arbitrary<unknown> = fc.letrec((tie) => ({
  value: fc.oneof(
    { depthSize: "small", withCrossShrink: true },
    text(12),
    number,
    fc.boolean(),
    fc.constant(null),
    tie("array"),
    tie("object"),
  ),
  array: fc.array(tie("value"), { maxLength: 4 }),
  object: fc.dictionary(text(8), tie("value"), { maxKeys: 5 }),
})).value;
const deep = fc.integer({ min: 55, max: 68 }).map((n) => {
  let v: unknown = "leaf";
  for (let i = 0; i < n; i++) v = i % 2 ? [v] : { d: v };
  return v;
});
/** Absent `absentWeight` times out of `absentWeight + 1`. */
const maybe = <T>(arb: fc.Arbitrary<T>, absentWeight = 1) =>
  fc.oneof({ weight: absentWeight, arbitrary: fc.constant(undefined) }, { weight: 1, arbitrary: arb });

const traceBody = fc
  .record({
    session_id: fc.oneof(
      { weight: 5, arbitrary: fc.string({ minLength: 1, maxLength: 20 }) },
      { weight: 1, arbitrary: text(600) },
    ),
    service_name: fc.oneof(
      { weight: 6, arbitrary: fc.constantFrom("svc-a", "svc-b", "ünï 🚀") },
      { weight: 1, arbitrary: text(220) },
    ),
    start: timestamp,
    end: fc.oneof({ weight: 2, arbitrary: fc.constant(null) }, { weight: 1, arbitrary: timestamp }),
    model: fc.oneof({ weight: 5, arbitrary: fc.constant("gpt-4o-mini") }, { weight: 1, arbitrary: text(300) }),
    messages: fc.array(
      fc.record({
        role: fc.oneof(
          { weight: 8, arbitrary: fc.constantFrom("system", "user", "assistant", "tool") },
          { weight: 1, arbitrary: text(70) },
        ),
        content: fc.oneof(
          { weight: 8, arbitrary: text(200) },
          { weight: 1, arbitrary: fc.constant(null) },
          {
            weight: 2,
            arbitrary: fc.array(fc.record({ type: fc.constantFrom("text", "image_url"), text: text(40) }), {
              maxLength: 3,
            }),
          },
        ),
      }),
      { minLength: 0, maxLength: 5 },
    ),
    reply: fc.oneof(text(200), fc.constant(null)),
    tokens: fc.oneof(
      { weight: 6, arbitrary: fc.tuple(fc.nat(100_000), fc.nat(100_000), fc.nat(200_000)) },
      { weight: 1, arbitrary: fc.tuple(number, number, number) },
    ),
    severityLikeIndex: fc.oneof({ weight: 6, arbitrary: fc.constant(0) }, { weight: 1, arbitrary: number }),
    metadata: maybe(fc.oneof({ weight: 4, arbitrary: freeJson }, { weight: 1, arbitrary: deep })),
    environment: maybe(text(140)),
    rawNumber: maybe(fc.constantFrom("1e400", "-1e400", "123456789012345678901234567890", "-0", "1E2"), 15),
  })
  .map((r) => {
    const body: Record<string, unknown> = {
      provider: "openai",
      service_name: r.service_name,
      session_id: r.session_id,
      start_time: r.start,
      end_time: r.end ?? r.start,
      request: { model: r.model, messages: r.messages },
      responses: [
        {
          id: "chatcmpl-x",
          object: "chat.completion",
          model: r.model,
          choices: [
            { index: r.severityLikeIndex, message: { role: "assistant", content: r.reply }, finish_reason: "stop" },
          ],
          usage: { prompt_tokens: r.tokens[0], completion_tokens: r.tokens[1], total_tokens: r.tokens[2] },
        },
      ],
    };
    if (r.metadata !== undefined) body.metadata = r.metadata;
    if (r.environment !== undefined) body.environment = r.environment;
    return { kind: "trace" as const, body, rawNumber: r.rawNumber };
  });

const eventBody = fc
  .record({
    name: fc.oneof(
      { weight: 5, arbitrary: fc.constantFrom("checkout", "feedback") },
      { weight: 1, arbitrary: text(300) },
    ),
    session_id: fc.oneof(
      { weight: 5, arbitrary: fc.string({ minLength: 1, maxLength: 20 }) },
      { weight: 1, arbitrary: text(600) },
    ),
    service_name: fc.constantFrom("svc-a", "svc-b"),
    timestamp,
    severity_number: maybe(
      fc.oneof({ weight: 4, arbitrary: fc.integer({ min: 1, max: 24 }) }, { weight: 1, arbitrary: number }),
    ),
    attributes: maybe(
      fc.oneof(
        { weight: 6, arbitrary: fc.dictionary(text(10), freeJson, { maxKeys: 8 }) },
        { weight: 1, arbitrary: freeJson },
      ),
    ),
    body: maybe(
      fc.oneof(
        { weight: 6, arbitrary: fc.dictionary(text(10), freeJson, { maxKeys: 8 }) },
        { weight: 1, arbitrary: deep },
      ),
    ),
    environment: maybe(text(140)),
    rawNumber: maybe(fc.constantFrom("1e400", "123456789012345678901234567890", "-0"), 15),
  })
  .map(({ rawNumber, ...r }) => {
    const body: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(r)) if (v !== undefined) body[k] = v;
    return { kind: "event" as const, body, rawNumber };
  });

const SENTINEL = "__raw_number__";
/** The JSON text of a case; `marker` makes every body unique and findable in Postgres (trace_id). */
function render(
  c: { kind: "trace" | "event"; body: Record<string, unknown>; rawNumber?: string },
  marker: string,
): string {
  const body = { ...c.body, trace_id: marker, ...(c.rawNumber ? { extra_number: SENTINEL } : {}) };
  const json = JSON.stringify(body);
  return c.rawNumber ? json.replace(`"${SENTINEL}"`, c.rawNumber) : json;
}

// --- the property --------------------------------------------------------------------------
test(`${RUNS} generated traces and events: each answers 400 at ingest or lands in Postgres; none fails in the processor (seed ${SEED})`, async () => {
  const cases = fc.sample(fc.oneof({ weight: 3, arbitrary: traceBody }, { weight: 2, arbitrary: eventBody }), {
    numRuns: RUNS,
    seed: SEED,
  });
  const runId = crypto.randomUUID().slice(0, 8);
  const accepted = new Map<string, { kind: "trace" | "event"; text: string }>();
  const otherStatus: Array<{ status: number; text: string; error: string }> = [];
  let rejected = 0;
  const reasons = new Map<string, number>();
  const auth = { authorization: `Bearer ${tenant.telemetryKey}` };

  let next = 0;
  await Promise.all(
    Array.from({ length: 32 }, async () => {
      while (next < cases.length) {
        const i = next++;
        const c = cases[i];
        const marker = `fz-${runId}-${i}`;
        const body = render(c, marker);
        const res = await stack.ingestRequest(c.kind === "trace" ? "/raw/traces" : "/raw/events", body, auth);
        if (res.status === 200) accepted.set(marker, { kind: c.kind, text: body });
        else if (res.status === 400) {
          rejected++;
          const field = String((await res.json()).error).match(/^invalid ([^:[.]+)/)?.[1] ?? "other";
          reasons.set(field, (reasons.get(field) ?? 0) + 1);
        } else otherStatus.push({ status: res.status, text: body.slice(0, 300), error: await res.text() });
      }
    }),
  );
  expect(otherStatus).toEqual([]);

  const storedMarkers = async () => {
    const rows = await stack.database.sql<{ trace_id: string }[]>`
      select trace_id from traces where trace_id like ${`fz-${runId}-%`}
      union all select trace_id from events where trace_id like ${`fz-${runId}-%`}`;
    return new Set(rows.map((r) => r.trace_id));
  };
  const info = async () => {
    return consumerBacklog(stack.nats.jsm, ingestStream, stack.nats.topology);
  };
  await waitFor(async () => (await info()) === 0, {
    what: "the processor to settle every message",
    timeoutMs: 120_000,
    intervalMs: 250,
  });
  const stored = await storedMarkers();
  const missing = [...accepted.keys()].filter((m) => !stored.has(m));

  console.log(
    `fuzz (seed ${SEED}): generated ${cases.length}, 400 at ingest ${rejected}, stored ${stored.size}, ` +
      `failed in the processor ${missing.length + dead.length} (dead letters ${dead.length}); 400s by field: ${JSON.stringify(Object.fromEntries([...reasons].sort((a, b) => b[1] - a[1])))}`,
  );
  expect(dead.map((d) => d.reason).slice(0, 5)).toEqual([]);
  expect(missing.slice(0, 5).map((m) => accepted.get(m)!.text.slice(0, 500))).toEqual([]);
  expect(stored.size).toBe(accepted.size);
  expect(cases.length).toBe(RUNS);
  // Both outcomes are exercised, or the generators drifted.
  expect(rejected).toBeGreaterThan(RUNS / 10);
  expect(accepted.size).toBeGreaterThan(RUNS / 10);
}, 300_000);

test("what ingest accepts, the processor's decoder accepts unchanged (pure, 10,000 shrinking runs)", () => {
  const codec = ingestStream.codec;
  const encoder = new TextEncoder();
  fc.assert(
    fc.property(fc.oneof(traceBody, eventBody), (c) => {
      let body: Record<string, unknown>;
      try {
        // Exactly what ingest runs on a body (apps/ingest/src/app.ts), minus auth and publish.
        const parsed = parseJsonStrict(render(c, "m"));
        body = (c.kind === "trace" ? validateTrace(parsed) : validateEvent(parsed)) as unknown as Record<
          string,
          unknown
        >;
      } catch (err) {
        if ((err as { status?: number }).status === 400) return;
        throw err;
      }
      const message = {
        kind: c.kind,
        messageId: "a".repeat(64),
        tenantId: tenant.tenantId,
        serviceName: "svc",
        receivedAt: new Date().toISOString(),
        payload: body,
      };
      const decoded = codec.decode("ingest.x", encoder.encode(JSON.stringify(message)), undefined);
      expect(decoded.ok ? null : decoded.error).toBeNull();
      // Unchanged as JSON (-0 and 0 are one JSON number).
      expect(JSON.stringify(decoded.ok && decoded.value)).toBe(JSON.stringify(message));
    }),
    { numRuns: 10_000, seed: SEED },
  );
});
