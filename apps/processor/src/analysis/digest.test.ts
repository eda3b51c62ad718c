import { expect, test } from "bun:test";
import fc from "fast-check";
import { decodePayload, encodePayload } from "@cellar/shared/db/payload-codec";
import { NeedsPayload } from "./chain.ts";
import { decodeDigest, encodeDigest } from "./digest.ts";
import { analyzeSession, type SessionAnalysis } from "./session.ts";
import { type EventInput, referenceOf, type TraceInput } from "./transcript.ts";

/**
 * Analyse once (docs/analyse-once.md): a session folded from its traces' digests, falling back to
 * its payloads when the fold needs them (NeedsPayload, as maturation does), gives the analysis the
 * payloads give (the oracle: the fold as it was), field for field and reference for reference,
 * over generated conversations: plain extensions, tool loops, two-response traces, retries,
 * edited and truncated histories, apps that drop the reply, equal start times; re-opened sessions
 * (a fold over the traces arrived by then, then over all) with traces arriving out of order.
 */
type Step = "say" | "tool" | "two" | "retry" | "edit" | "window" | "drop" | "fresh";
const SYSTEM = { role: "system", content: "You are a helpful assistant." };

function conversation(steps: Step[], seed: number, sameStart: boolean[]) {
  let history: any[] = [SYSTEM];
  let last: any[] | null = null;
  const payloads: Array<Record<string, any>> = [];
  let pendingTool: any = null;
  steps.forEach((step, i) => {
    let request: any[];
    if (step === "retry" && last) request = last;
    else if (pendingTool) {
      request = [...history, { role: "tool", tool_call_id: pendingTool.id, content: `result ${i}` }];
      pendingTool = null;
    } else if (step === "edit" && history.length > 2) {
      const copy = history.slice();
      copy[copy.length - 1] = { role: "assistant", content: `edited ${i}` };
      request = [...copy, { role: "user", content: `after edit ${i}` }];
    } else if (step === "window") request = [SYSTEM, ...history.slice(-3), { role: "user", content: `window ${i}` }];
    else if (step === "drop" && history.length > 2)
      request = [...history.slice(0, -1), { role: "user", content: `drop ${i}` }];
    else if (step === "fresh") request = [SYSTEM, { role: "user", content: `new topic ${i}` }];
    else request = [...history, { role: "user", content: `  question   ${i} of ${seed}\n` }];
    const call = { id: `call_${seed}_${i}`, type: "function", function: { name: "lookup", arguments: `{"q": ${i}}` } };
    const reply =
      step === "tool"
        ? { role: "assistant", content: null, tool_calls: [call] }
        : { role: "assistant", content: `answer ${i}` };
    const responses = [
      {
        id: `r${i}`,
        model: "gpt-4o-mini",
        choices: [
          {
            index: 0,
            message: step === "two" ? { role: "assistant", content: null, tool_calls: [call] } : reply,
            finish_reason: step === "tool" || step === "two" ? "tool_calls" : "stop",
          },
        ],
        usage: { prompt_tokens: 10 + i, completion_tokens: 5, total_tokens: 15 + i },
      },
    ];
    if (step === "two")
      responses.push({
        id: `r${i}b`,
        model: "gpt-4o-mini",
        choices: [{ index: 0, message: { role: "assistant", content: `after tool ${i}` }, finish_reason: "stop" }],
        usage: { prompt_tokens: 20, completion_tokens: 5, total_tokens: 25 },
      });
    if (step === "tool") pendingTool = call;
    const start = Date.UTC(2026, 0, 1) + (sameStart[i] ? i - 1 : i) * 1_000;
    payloads.push({
      provider: "openai",
      session_id: `s${seed}`,
      start_time: new Date(start).toISOString(),
      end_time: new Date(start + 800).toISOString(),
      request: {
        model: "gpt-4o-mini",
        messages: request,
        tools: [{ type: "function", function: { name: "lookup", parameters: { type: "object" } } }],
      },
      responses,
    });
    last = request;
    history = [...request, ...responses.map((r) => r.choices[0].message)];
    if (step === "two") history.push({ role: "tool", tool_call_id: call.id, content: "two result" });
  });
  return payloads;
}

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
