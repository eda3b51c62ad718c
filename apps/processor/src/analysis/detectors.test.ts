import { describe, expect, test } from "bun:test";
import { computeSessionAnalysis } from "./session";
import type { LatencyNorms } from "./detectors";
import { assistant, event, toolResult, trace, user } from "./test-fixtures";

const detectorsOf = (traces: any[], events: any[] = [], norms?: LatencyNorms) =>
  computeSessionAnalysis(traces, events, norms).findings.map((f) => f.detector);
const ok = () => trace({ at: 0, messages: [user("hello")], responses: [{ message: assistant("Hi! How can I help?") }] });

describe("detectors: each rule fires on its case and not on a clean session", () => {
  test("clean session has no findings", () => {
    expect(detectorsOf([ok()], [event({ at: 1, name: "info", severity: 9 })])).toEqual([]);
  });

  test("response cut off (finish_reason length)", () => {
    expect(detectorsOf([trace({ at: 0, messages: [user("essay")], responses: [{ message: assistant("Once upon a"), finish: "length" }] })])).toEqual(["response_cut_off"]);
    expect(detectorsOf([trace({ at: 0, messages: [user("essay")], responses: [{ message: assistant("The end."), finish: "stop" }] })])).not.toContain("response_cut_off");
  });

  test("content filtered", () => {
    expect(detectorsOf([trace({ at: 0, messages: [user("x")], responses: [{ message: assistant(null), finish: "content_filter" }] })])).toEqual(["content_filtered"]);
    expect(detectorsOf([ok()])).not.toContain("content_filtered");
  });

  test("tool call never answered", () => {
    const call = assistant(null, [{ id: "c1", name: "search", args: { q: "x" } }]);
    const unanswered = trace({ at: 0, messages: [user("find x")], responses: [{ message: call, finish: "tool_calls" }] });
    expect(detectorsOf([unanswered])).toEqual(["tool_call_unanswered"]);
    const answered = trace({ at: 1, messages: [user("find x"), call, toolResult("c1", "found")], responses: [{ message: assistant("Found it.") }] });
    expect(detectorsOf([unanswered, answered])).toEqual([]);
    // A 2-response payload answers its own tool call.
    const twoResponses = trace({ at: 0, messages: [user("find x")], responses: [{ message: call, finish: "tool_calls" }, { message: assistant("Found it.") }] });
    expect(detectorsOf([twoResponses])).toEqual([]);
  });

  test("the same tool with the same arguments in a loop", () => {
    const calls = [1, 2, 3].map((n) => {
      const call = assistant(null, [{ id: `c${n}`, name: "search", args: { q: "same" } }]);
      return { call, result: toolResult(`c${n}`, "nothing") };
    });
    const history: any[] = [user("find")];
    const traces = calls.map(({ call, result }, i) => {
      const t = trace({ at: i, messages: [...history], responses: [{ message: call, finish: "tool_calls" }] });
      history.push(call, result);
      return t;
    });
    traces.push(trace({ at: 9, messages: [...history], responses: [{ message: assistant("Gave up.") }] }));
    const found = computeSessionAnalysis(traces, []).findings.filter((f) => f.detector === "tool_loop");
    expect(found).toHaveLength(1);
    expect(found[0].evidence).toMatchObject({ toolName: "search", count: 3 });
    // Different arguments each time is not a loop.
    const varied = [1, 2, 3].map((n) => trace({ at: n, messages: [user("find")], responses: [{ message: assistant(null, [{ id: `v${n}`, name: "search", args: { q: n } }]), finish: "tool_calls" }, { message: assistant("ok") }] }));
    expect(detectorsOf(varied)).not.toContain("tool_loop");
  });

  test("error events (severity >= 17)", () => {
    const found = computeSessionAnalysis([ok()], [event({ at: 1, name: "payment.failed", severity: 17 }), event({ at: 2, name: "crash", severity: 21 })]).findings;
    expect(found.map((f) => [f.detector, f.severity])).toEqual([["error_event", "high"], ["error_event", "critical"]]);
    expect(detectorsOf([ok()], [event({ at: 1, name: "warn", severity: 16 })])).toEqual([]);
  });

  test("empty assistant response", () => {
    expect(detectorsOf([trace({ at: 0, messages: [user("q")], responses: [{ message: assistant("   ") }] })])).toEqual(["empty_response"]);
    expect(detectorsOf([trace({ at: 0, messages: [user("q")], responses: [{ message: assistant(null, [{ id: "c", name: "t", args: {} }]), finish: "tool_calls" }, { message: assistant("done") }] })])).toEqual([]);
  });

  test("refusal (explicit field or phrasing)", () => {
    expect(detectorsOf([trace({ at: 0, messages: [user("q")], responses: [{ message: assistant("I'm sorry, but I can't help with that.") }] })])).toEqual(["refusal"]);
    expect(detectorsOf([trace({ at: 0, messages: [user("q")], responses: [{ message: { role: "assistant", content: null, refusal: "No." } }] })])).toEqual(["refusal"]);
    expect(detectorsOf([trace({ at: 0, messages: [user("q")], responses: [{ message: assistant("Sorry for the wait! Here is your answer: 42.") }] })])).toEqual([]);
  });

  test("latency far above the service norm", () => {
    const norms: LatencyNorms = new Map([["gpt-4o-mini", { p50Ms: 800, samples: 200 }]]);
    const slow = trace({ at: 0, durationMs: 9_000, messages: [user("q")], responses: [{ message: assistant("a") }] });
    const normal = trace({ at: 0, durationMs: 1_200, messages: [user("q")], responses: [{ message: assistant("a") }] });
    expect(detectorsOf([slow], [], norms)).toEqual(["latency_outlier"]);
    expect(detectorsOf([normal], [], norms)).toEqual([]);
    // Too few samples for a norm: no finding.
    expect(detectorsOf([slow], [], new Map([["gpt-4o-mini", { p50Ms: 800, samples: 5 }]]))).toEqual([]);
  });

  test("prompt near the model's context window", () => {
    const big = trace({ at: 0, messages: [user("q")], responses: [{ message: assistant("a"), usage: { prompt_tokens: 120_000, completion_tokens: 10, total_tokens: 120_010 } }] });
    const small = trace({ at: 0, messages: [user("q")], responses: [{ message: assistant("a"), usage: { prompt_tokens: 60_000, completion_tokens: 10, total_tokens: 60_010 } }] });
    const unknown = trace({ at: 0, model: "my-llama", messages: [user("q")], responses: [{ message: assistant("a"), model: "my-llama", usage: { prompt_tokens: 999_999, completion_tokens: 1, total_tokens: 1_000_000 } }] });
    expect(detectorsOf([big])).toEqual(["context_window_near"]);
    expect(detectorsOf([small])).toEqual([]);
    expect(detectorsOf([unknown])).toEqual([]);
  });

  test("fingerprints group the same problem across sessions", () => {
    const a = computeSessionAnalysis([trace({ at: 0, messages: [user("a")], responses: [{ message: assistant("x"), finish: "length" }] })], []).findings[0];
    const b = computeSessionAnalysis([trace({ at: 50, messages: [user("b")], responses: [{ message: assistant("y"), finish: "length" }] })], []).findings[0];
    const c = computeSessionAnalysis([trace({ at: 0, messages: [user("a")], responses: [{ message: assistant("x"), finish: "content_filter" }] })], []).findings[0];
    expect(a.fingerprint).toBe(b.fingerprint);
    expect(a.fingerprint).not.toBe(c.fingerprint);
  });
});
