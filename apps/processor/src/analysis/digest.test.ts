import { expect, test } from "bun:test";
import fc from "fast-check";
import { decodePayload, encodePayload } from "@cellar/shared/db/payload-codec";
import { NeedsPayload } from "./chain.ts";
import { decodeDigest, encodeDigest } from "./digest.ts";
import { analyzeSession, type SessionAnalysis } from "./session.ts";
import { conversation, type Step } from "./test-conversations.ts";
import { type EventInput, referenceOf, type TraceInput } from "./transcript.ts";

/**
 * Analyse once (docs/analyse-once.md): a session folded from its traces' digests, falling back to
 * its payloads when the fold needs them (NeedsPayload, as maturation does), gives the analysis the
 * payloads give (the oracle: the fold as it was), field for field and reference for reference,
 * over generated conversations: plain extensions, tool loops, two-response traces, retries,
 * edited and truncated histories, apps that drop the reply, equal start times; re-opened sessions
 * (a fold over the traces arrived by then, then over all) with traces arriving out of order.
 */
const inputOf = (p: Record<string, any>, i: number) => ({
  pk: `pk-${i}`,
  traceId: `t-${String(i).padStart(3, "0")}`,
  startTime: new Date(p.start_time),
  endTime: new Date(p.end_time),
});
function whole(p: Record<string, any>, i: number): TraceInput {
  return { ...inputOf(p, i), payload: decodePayload({ payload_z: encodePayload(p) }) };
}
function digested(p: Record<string, any>, i: number): TraceInput {
  const stored = encodeDigest(p, 0, 0);
  return stored ? decodeDigest(stored, inputOf(p, i)) : whole(p, i);
}
/** What maturation stores and publishes of an analysis: every field, and each item's reference. */
const comparable = (a: SessionAnalysis) =>
  JSON.stringify({ ...a, references: a.items.map((it) => referenceOf(it) ?? null) });

let folds = 0;
let fallbacks = 0;
function fold(
  traces: Array<[Record<string, any>, number]>,
  events: EventInput[],
): { result: string; fellBack: boolean } {
  folds++;
  try {
    return {
      result: comparable(
        analyzeSession(
          traces.map(([p, i]) => digested(p, i)),
          events,
        ),
      ),
      fellBack: false,
    };
  } catch (err) {
    if (!(err instanceof NeedsPayload)) throw err;
    fallbacks++;
    return {
      result: comparable(
        analyzeSession(
          traces.map(([p, i]) => whole(p, i)),
          events,
        ),
      ),
      fellBack: true,
    };
  }
}
const oracle = (traces: Array<[Record<string, any>, number]>, events: EventInput[]) =>
  comparable(
    analyzeSession(
      traces.map(([p, i]) => whole(p, i)),
      events,
    ),
  );

const stepArb = fc.constantFrom<Step>("say", "say", "say", "tool", "two", "retry", "edit", "window", "drop", "fresh");

test("a session folded from digests is the session folded from payloads, re-opened and out of order", () => {
  fc.assert(
    fc.property(
      fc.array(stepArb, { minLength: 1, maxLength: 14 }),
      fc.nat(1_000),
      fc.array(fc.boolean(), { minLength: 14, maxLength: 14 }),
      fc.func(fc.integer()),
      fc.nat(),
      (steps, seed, sameStart, rank, cutAt) => {
        const payloads = conversation(steps, seed, sameStart);
        const events: EventInput[] = payloads.slice(0, 2).map((p, i) => ({
          id: `00000000-0000-4000-8000-00000000000${i}`,
          name: "error",
          timestamp: new Date(Date.parse(p.start_time) + 100),
          severityNumber: 17,
          attributes: {},
          body: { message: `boom ${i}` },
          traceId: null,
        }));
        // Arrival order: any permutation; the first maturation sees the traces arrived by the cut.
        const arrived = payloads
          .map((p, i) => [p, i] as [Record<string, any>, number])
          .sort((a, b) => rank(a[1]) - rank(b[1]) || a[1] - b[1]);
        const cut = 1 + (cutAt % arrived.length);
        for (const part of [arrived.slice(0, cut), arrived]) {
          const { result } = fold(part, events);
          expect(result).toBe(oracle(part, events));
        }
      },
    ),
    { numRuns: 300 },
  );
  // The digests were folded, not only fallen back from.
  expect(fallbacks).toBeLessThan(folds * 0.75);
});

test("a conversation that only grows is folded from its digests, without falling back", () => {
  fc.assert(
    fc.property(
      fc.array(fc.constantFrom<Step>("say", "tool", "two"), { minLength: 1, maxLength: 30 }),
      fc.nat(1_000),
      (steps, seed) => {
        const payloads = conversation(steps, seed, new Array(30).fill(false));
        const traces = payloads.map((p, i) => [p, i] as [Record<string, any>, number]);
        const { result, fellBack } = fold(traces, []);
        expect(fellBack).toBe(false);
        expect(result).toBe(oracle(traces, []));
      },
    ),
    { numRuns: 200 },
  );
});

test("a digest keeps the tail whole and chains the history", () => {
  const payloads = conversation(["say", "say", "say"], 1, [false, false, false]);
  const last = payloads[2];
  const t = digested(last, 2);
  // system, then two turns re-sent (up to the last assistant message), then the new question.
  expect(t.chained).toMatchObject({ n: 6, from: 5 });
  expect(t.chained!.chains.length).toBe(2);
  expect(t.payload.request.messages[5]).toEqual(last.request.messages[5]);
  expect(t.payload.request.messages[0]).toBeUndefined();
  // Short payloads get none.
  expect(encodeDigest(last, 1_000)).toBeNull();
});
