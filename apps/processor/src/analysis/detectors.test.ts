import { describe, expect, test } from "bun:test";
import { analyzeSession } from "./session.ts";
import { latencyBaseline, type LatencyNorms } from "./detectors.ts";
import { resolveDetectorConfig } from "@cellar/shared/analysis/detector-config";
import { assistant, event, toolResult, trace, user } from "../../../../test/fixtures/analysis-history.ts";

const detectorsOf = (traces: any[], events: any[] = [], norms?: LatencyNorms) =>
  analyzeSession(traces, events, { latencyNorms: norms }).findings.map((f) => f.detector);
const ok = () =>
  trace({ at: 0, messages: [user("hello")], responses: [{ message: assistant("Hi! How can I help?") }] });

describe("detectors: each rule fires on its case and not on a clean session", () => {
  test("clean session has no findings", () => {
    expect(detectorsOf([ok()], [event({ at: 1, name: "info", severity: 9 })])).toEqual([]);
  });

  test("response cut off (finish_reason length)", () => {
    expect(
      detectorsOf([
        trace({
          at: 0,
          messages: [user("essay")],
          responses: [{ message: assistant("Once upon a"), finish: "length" }],
        }),
      ]),
    ).toEqual(["response_cut_off"]);
    expect(
      detectorsOf([
        trace({ at: 0, messages: [user("essay")], responses: [{ message: assistant("The end."), finish: "stop" }] }),
      ]),
    ).not.toContain("response_cut_off");
  });

  test("content filtered", () => {
    expect(
      detectorsOf([
        trace({ at: 0, messages: [user("x")], responses: [{ message: assistant(null), finish: "content_filter" }] }),
      ]),
    ).toEqual(["content_filtered"]);
    expect(detectorsOf([ok()])).not.toContain("content_filtered");
  });

  test("tool call never answered", () => {
    const call = assistant(null, [{ id: "c1", name: "search", args: { q: "x" } }]);
    const unanswered = trace({
      at: 0,
      messages: [user("find x")],
      responses: [{ message: call, finish: "tool_calls" }],
    });
    expect(detectorsOf([unanswered])).toEqual(["tool_call_unanswered"]);
    const answered = trace({
      at: 1,
      messages: [user("find x"), call, toolResult("c1", "found")],
      responses: [{ message: assistant("Found it.") }],
    });
    expect(detectorsOf([unanswered, answered])).toEqual([]);
    // A 2-response payload answers its own tool call.
    const twoResponses = trace({
      at: 0,
      messages: [user("find x")],
      responses: [{ message: call, finish: "tool_calls" }, { message: assistant("Found it.") }],
    });
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
    const found = analyzeSession(traces, []).findings.filter((f) => f.detector === "tool_loop");
    expect(found).toHaveLength(1);
    expect(found[0].evidence).toMatchObject({ toolName: "search", count: 3 });
    // Different arguments each time is not a loop.
    const varied = [1, 2, 3].map((n) =>
      trace({
        at: n,
        messages: [user("find")],
        responses: [
          { message: assistant(null, [{ id: `v${n}`, name: "search", args: { q: n } }]), finish: "tool_calls" },
          { message: assistant("ok") },
        ],
      }),
    );
    expect(detectorsOf(varied)).not.toContain("tool_loop");
  });

  test("error events (severity >= 17)", () => {
    const found = analyzeSession(
      [ok()],
      [event({ at: 1, name: "payment.failed", severity: 17 }), event({ at: 2, name: "crash", severity: 21 })],
    ).findings;
    expect(found.map((f) => [f.detector, f.severity])).toEqual([
      ["error_event", "high"],
      ["error_event", "critical"],
    ]);
    expect(detectorsOf([ok()], [event({ at: 1, name: "warn", severity: 16 })])).toEqual([]);
  });

  test("empty assistant response", () => {
    expect(detectorsOf([trace({ at: 0, messages: [user("q")], responses: [{ message: assistant("   ") }] })])).toEqual([
      "empty_response",
    ]);
    expect(
      detectorsOf([
        trace({
          at: 0,
          messages: [user("q")],
          responses: [
            { message: assistant(null, [{ id: "c", name: "t", args: {} }]), finish: "tool_calls" },
            { message: assistant("done") },
          ],
        }),
      ]),
    ).toEqual([]);
  });

  test("refusals in many languages; quotes and apologies that help are not refusals", () => {
    const reply = (text: string) =>
      detectorsOf([trace({ at: 0, messages: [user("q")], responses: [{ message: assistant(text) }] })]);
    for (const text of [
      "Lo siento, pero no puedo ayudarte con eso.",
      "Desculpe, mas não posso ajudar com isso.",
      "Désolé, mais je ne peux pas vous aider avec cela.",
      "Es tut mir leid, aber dabei kann ich nicht helfen.",
      "Извините, но я не могу с этим помочь.",
      "抱歉，我无法帮助你完成这个请求。",
      "申し訳ありませんが、そのご依頼にはお応えできません。",
      "죄송하지만 그 요청은 도와드릴 수 없습니다.",
      "عذرًا، لا أستطيع المساعدة في هذا الطلب.",
      "क्षमा करें, मैं इसमें आपकी मदद नहीं कर सकता।",
      "Maaf, saya tidak bisa membantu dengan permintaan itu.",
      "Mi dispiace, ma non posso aiutarti con questo.",
    ])
      expect([text, reply(text)]).toEqual([text, ["refusal"]]);
    for (const text of [
      "\"I'm sorry, but I can't help with that\" is what the model said earlier; here is why it did.",
      "> Lo siento, pero no puedo ayudarte con eso.\nEse mensaje aparece cuando el filtro bloquea la petición.",
      "Lo siento por la confusión. Aquí está el código corregido: " + "x".repeat(700),
      "Sorry for the confusion! I can't believe I missed that: the fix is to close the file handle. " +
        "Details. ".repeat(80),
      "No puedo creer lo fácil que es: usa map().",
    ])
      expect([text, reply(text)]).toEqual([text, []]);
    // Language-independent: finish_reason "refusal".
    expect(
      detectorsOf([
        trace({ at: 0, messages: [user("q")], responses: [{ message: assistant("…"), finish: "refusal" }] }),
      ]),
    ).toEqual(["refusal"]);
  });

  test("refusal (explicit field or phrasing)", () => {
    expect(
      detectorsOf([
        trace({
          at: 0,
          messages: [user("q")],
          responses: [{ message: assistant("I'm sorry, but I can't help with that.") }],
        }),
      ]),
    ).toEqual(["refusal"]);
    expect(
      detectorsOf([
        trace({
          at: 0,
          messages: [user("q")],
          responses: [{ message: { role: "assistant", content: null, refusal: "No." } }],
        }),
      ]),
    ).toEqual(["refusal"]);
    expect(
      detectorsOf([
        trace({
          at: 0,
          messages: [user("q")],
          responses: [{ message: assistant("Sorry for the wait! Here is your answer: 42.") }],
        }),
      ]),
    ).toEqual([]);
  });

  test("latency: robust per-model baseline in ms per output token, minimum samples", () => {
    // Baseline: 20 ms per output token, MAD 3 ms, 200 samples.
    const norms: LatencyNorms = new Map([["gpt-4o-mini", { medianMsPerToken: 20, madMsPerToken: 3, samples: 200 }]]);
    const call = (ms: number, tokens: number) =>
      trace({
        at: 0,
        durationMs: ms,
        messages: [user("q")],
        responses: [
          {
            message: assistant("a"),
            usage: { prompt_tokens: 10, completion_tokens: tokens, total_tokens: 10 + tokens },
          },
        ],
      });
    // 9 s for 60 tokens = 150 ms/token: far outside.
    expect(detectorsOf([call(9_000, 60)], [], norms)).toEqual(["latency_outlier"]);
    // The case: 4.5 s, 3.4x the median call, but a long answer (220 tokens): ordinary.
    expect(detectorsOf([call(4_500, 220)], [], norms)).toEqual([]);
    // Short reply: tokens floored at 50, so 1.3 s for 5 tokens is normal overhead.
    expect(detectorsOf([call(1_300, 5)], [], norms)).toEqual([]);
    // Too few samples for a baseline: no finding.
    expect(
      detectorsOf(
        [call(9_000, 60)],
        [],
        new Map([["gpt-4o-mini", { medianMsPerToken: 20, madMsPerToken: 3, samples: 10 }]]),
      ),
    ).toEqual([]);
    // Thresholds come from the service's config.
    const strict = resolveDetectorConfig({ latency_outlier: { minSamples: 5 } });
    expect(
      analyzeSession([call(9_000, 60)], [], {
        latencyNorms: new Map([["gpt-4o-mini", { medianMsPerToken: 20, madMsPerToken: 3, samples: 10 }]]),
        config: strict,
      }).findings.map((f) => f.detector),
    ).toEqual(["latency_outlier"]);
    const off = resolveDetectorConfig({ latency_outlier: { enabled: false } });
    expect(analyzeSession([call(9_000, 60)], [], { latencyNorms: norms, config: off }).findings).toEqual([]);
  });

  test("latency baseline: median and scaled MAD, robust to a few extreme samples", () => {
    const samples = Array.from({ length: 40 }, (_, i) => ({ latencyMs: 100 * (20 + (i % 5)), completionTokens: 100 }));
    samples.push({ latencyMs: 600_000, completionTokens: 100 }, { latencyMs: 900_000, completionTokens: 100 });
    const b = latencyBaseline(samples, 50);
    expect(b.samples).toBe(42);
    expect(b.medianMsPerToken).toBe(22);
    expect(b.madMsPerToken).toBeCloseTo(1.4826, 3);
  });

  test("prompt near the model's context window", () => {
    const big = trace({
      at: 0,
      messages: [user("q")],
      responses: [
        { message: assistant("a"), usage: { prompt_tokens: 120_000, completion_tokens: 10, total_tokens: 120_010 } },
      ],
    });
    const small = trace({
      at: 0,
      messages: [user("q")],
      responses: [
        { message: assistant("a"), usage: { prompt_tokens: 60_000, completion_tokens: 10, total_tokens: 60_010 } },
      ],
    });
    const unknown = trace({
      at: 0,
      model: "my-llama",
      messages: [user("q")],
      responses: [
        {
          message: assistant("a"),
          model: "my-llama",
          usage: { prompt_tokens: 999_999, completion_tokens: 1, total_tokens: 1_000_000 },
        },
      ],
    });
    expect(detectorsOf([big])).toEqual(["context_window_near"]);
    expect(detectorsOf([small])).toEqual([]);
    expect(detectorsOf([unknown])).toEqual(["unpriced_model"]); // never context_window_near
  });

  test("fingerprints group the same problem across sessions", () => {
    const a = analyzeSession(
      [trace({ at: 0, messages: [user("a")], responses: [{ message: assistant("x"), finish: "length" }] })],
      [],
    ).findings[0];
    const b = analyzeSession(
      [trace({ at: 50, messages: [user("b")], responses: [{ message: assistant("y"), finish: "length" }] })],
      [],
    ).findings[0];
    const c = analyzeSession(
      [trace({ at: 0, messages: [user("a")], responses: [{ message: assistant("x"), finish: "content_filter" }] })],
      [],
    ).findings[0];
    expect(a.fingerprint).toBe(b.fingerprint);
    expect(a.fingerprint).not.toBe(c.fingerprint);
  });
});
