import type { Instrumentation } from "./otlp-writer";
import { worldScenarios } from "./scenarios-world";
import { SessionWriter, type CallSpec, type History } from "./session-writer";

/**
 * The corpus: sessions of several kinds of app, generated from a seed (no clock, no network).
 * Every fault is injected on purpose and labelled; every detector also gets hard negatives.
 * `kind` says what each session exercises (printed by `npm run score`).
 */
export interface CorpusSession {
  kind: string;
  w: SessionWriter;
  /** The language the session's text is in, where its detectors read language (refusals, injections). */
  language?: string;
  /**
   * `dev` (default): the development set detectors are tuned on; `heldout`: the cases they are
   * not tuned against (test/corpus/heldout/, CONTRIBUTING.md "the analysis corpus").
   */
  set?: "dev" | "heldout";
  /** The class of injection a session holds (heldout/injections.ts), or `clean:<kind>` for a look-alike. */
  injectionClass?: string;
  /** Held-out cases: which batch they came in (`npm run score` prints `prompt_injection` per source). */
  source?: string;
}

export const CORPUS_SEED = 20251117;
/** All sessions happen on this (fixed) day; each session gets its own hour. */
const DAY = Date.UTC(2025, 8, 1, 0, 0, 0);

function mulberry32(seed: number) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export function buildCorpus(seed = CORPUS_SEED): CorpusSession[] {
  const rnd = mulberry32(seed);
  const int = (lo: number, hi: number) => lo + Math.floor(rnd() * (hi - lo + 1));
  const pick = <T>(list: T[]): T => list[Math.floor(rnd() * list.length)];
  /** Even durations: a 2-response trace splits exactly in two. */
  const dur = (lo: number, hi: number) => int(lo / 2, hi / 2) * 2;
  const out: CorpusSession[] = [];
  let n = 0;
  const session = (
    kind: string,
    service: string,
    history: History = { kind: "full" },
    opts: { otlp?: Instrumentation; language?: string; injectionClass?: string } = {},
  ) => {
    const w = new SessionWriter(
      `corpus-${String(++n).padStart(3, "0")}-${kind}`,
      service,
      DAY + n * 3_600_000,
      history,
      opts.otlp ?? null,
    );
    out.push({
      kind,
      w,
      ...(opts.language ? { language: opts.language } : {}),
      ...(opts.injectionClass ? { injectionClass: opts.injectionClass } : {}),
    });
    return w;
  };
  const mini = (extra: Partial<CallSpec> = {}): CallSpec => ({
    model: "gpt-4o-mini",
    prompt: int(200, 3_000),
    completion: int(20, 300),
    cached: 0,
    ...extra,
  });
  const say = (text: string, extra: Partial<CallSpec> = {}) => mini({ text, ...extra });
  const topics = [
    "invoice 4417",
    "a delayed parcel",
    "the API rate limit",
    "resetting a password",
    "a refund for order 88",
    "upgrading the plan",
  ];

  // --- Support chat: plain multi-turn, full history (with a repeated identical user message).
  for (let i = 0; i < 4; i++) {
    const w = session("support-chat", "support-bot").system("You are a helpful support agent. Be brief.");
    const topic = pick(topics);
    w.user(`Hi, I need help with ${topic}.`)
      .wait(400)
      .call(say(`Sure, tell me more about ${topic}.`), dur(600, 1_800));
    w.wait(int(3_000, 9_000))
      .user("continue")
      .wait(300)
      .call(say(`Step ${i + 1}: check the settings page.`), dur(600, 1_800));
    w.wait(int(3_000, 9_000))
      .user("continue")
      .wait(300)
      .call(say(`Step ${i + 2}: save and retry.`), dur(600, 1_800));
  }

  // --- Sliding window and summarised histories.
  for (let i = 0; i < 3; i++) {
    const w = session("sliding-window", "support-bot", { kind: "window", keep: 4 }).system("Answer in one line.");
    for (let turn = 0; turn < 5; turn++)
      w.wait(int(2_000, 6_000))
        .user(`Question ${turn} about ${pick(topics)} (${i})`)
        .wait(200)
        .call(say(`Answer ${turn}.${i}`), dur(500, 1_500));
  }
  for (let i = 0; i < 3; i++) {
    const w = session("summarised-history", "support-bot", {
      kind: "summary",
      text: `Summary of the earlier conversation (${i}): the user asked about ${pick(topics)}.`,
      keep: 4,
    }).system("You are terse.");
    for (let turn = 0; turn < 5; turn++)
      w.wait(int(2_000, 6_000))
        .user(`Turn ${turn}: and then? (${i})`)
        .wait(200)
        .call(say(`Then ${turn}.${i}`), dur(500, 1_500));
  }

  // --- Tool agents, both 2-response conventions on the same script (same transcript expected).
  for (let i = 0; i < 4; i++) {
    for (const convention of ["first", "second"] as const) {
      const w = session(`tool-agent-2resp-${convention}`, "agent-bot").system("You can look up orders.");
      const id = `call_ord_${i}`;
      w.user(`Where is order ${100 + i}?`)
        .wait(300)
        .toolWorkflow(
          mini({ text: null, toolCalls: [{ id, name: "lookup_order", args: { order: 100 + i } }], completion: 18 }),
          [{ id, name: "lookup_order", content: JSON.stringify({ status: "shipped", eta: `2025-09-0${i + 3}` }) }],
          say(`Order ${100 + i} has shipped.`),
          dur(1_200, 3_000),
          convention,
        );
      w.wait(int(4_000, 8_000))
        .user("Thanks! Anything else I should know?")
        .wait(300)
        .call(say("No, you're all set."), dur(500, 1_200));
    }
  }

  // --- Parallel tool calls (separate traces): call, call, result, result.
  for (let i = 0; i < 3; i++) {
    const w = session("parallel-tools", "agent-bot").system("Weather assistant.");
    const cities = ["Oslo", "Rome", "Lima"].slice(0, 2 + (i % 2));
    const calls = cities.map((city, k) => ({ id: `call_w${i}_${k}`, name: "get_weather", args: { city } }));
    w.user(`Weather in ${cities.join(" and ")}?`)
      .wait(300)
      .call(mini({ text: null, toolCalls: calls, completion: 30 }), dur(600, 1_400));
    w.wait(int(500, 2_000))
      .toolResults(calls.map((c, k) => ({ id: c.id, name: c.name, content: `${10 + k * 7}C` })))
      .call(say(`It is mild in ${cities[0]}.`), dur(600, 1_400));
  }

  // --- RAG: retrieval tool, long context, cached prompt tokens.
  for (let i = 0; i < 3; i++) {
    const w = session("rag", "docs-bot").system("Answer from the retrieved documents only.");
    const id = `call_rag_${i}`;
    w.user(`How do I configure ${pick(["webhooks", "SSO", "retention"])}?`)
      .wait(200)
      .call(
        mini({ text: null, toolCalls: [{ id, name: "search_docs", args: { q: `config ${i}`, k: 4 } }] }),
        dur(500, 900),
      );
    w.wait(int(300, 900)).toolResults([
      { id, name: "search_docs", content: `[doc ${i}] ` + "Settings > Integrations. ".repeat(int(20, 60)) },
    ]);
    w.call(
      mini({ text: `Go to Settings > Integrations (doc ${i}).`, prompt: int(4_000, 9_000), cached: 1_024 * int(1, 3) }),
      dur(900, 2_400),
    );
  }

  // --- Reasoning model with cached and reasoning tokens.
  for (let i = 0; i < 3; i++) {
    const w = session("reasoning", "math-bot");
    w.user(`Prove that ${i + 2} is prime.`)
      .wait(100)
      .call(
        {
          model: "o3-mini",
          prompt: int(100, 600),
          completion: int(600, 2_000),
          cached: i * 64,
          reasoning: int(400, 500),
          message: {
            role: "assistant",
            content: `${i + 2} has no divisors besides 1 and itself.`,
            reasoning_content: "Check divisors up to the square root.",
          },
        },
        dur(4_000, 12_000),
      );
  }

  // --- Unknown model: usage counted, cost null, an unpriced_model finding.
  for (let i = 0; i < 2; i++) {
    const w = session("unknown-model", "local-bot");
    w.user("Summarise this paragraph.")
      .wait(100)
      .call(
        {
          model: "my-llama-70b",
          responseModel: "my-llama-70b",
          prompt: int(300, 900),
          completion: int(50, 200),
          text: "It says the launch moved.",
        },
        dur(800, 2_000),
      )
      .expectFinding("unpriced_model", w.lastCallKey());
    if (i === 1)
      w.wait(5_000).user("And in French?").wait(100).call(say("Le lancement a été déplacé."), dur(600, 1_000));
  }

  // --- Edited history: the app rewrites the last user message and regenerates.
  for (let i = 0; i < 3; i++) {
    const w = session("edited-history", "support-bot").system("Be helpful.");
    w.user("What's the capital of Australia?").wait(200).call(say("Canberra."), dur(500, 900));
    w.wait(3_000)
      .user(`How many people live in Sydnye? (${i})`)
      .wait(200)
      .call(say("Did you mean Sydney?"), dur(500, 900));
    w.wait(4_000)
      .editLastUser(`How many people live in Sydney? (${i})`)
      .wait(200)
      .call(say("About 5.3 million."), dur(500, 900));
  }

  // --- Events during tool runs: emitted between the call and the request that carries the result.
  for (let i = 0; i < 3; i++) {
    const w = session("events-during-tools", "agent-bot").system("Agent.");
    const id = `call_ev_${i}`;
    w.user("Fetch the report.")
      .wait(200)
      .call(mini({ text: null, toolCalls: [{ id, name: "fetch_report", args: { id: i } }] }), dur(600, 1_000));
    w.event(1_137, "tool.retry", 13).event(2_311, "tool.progress");
    if (i === 2)
      w.event(2_713, "agent.max_steps_reached", 17).expectFinding(
        "error_event",
        w.eventKey("agent.max_steps_reached", 2_713),
      );
    w.wait(3_000)
      .toolResults([{ id, name: "fetch_report", content: "report ready" }])
      .call(say("Here is the report."), dur(600, 1_000));
  }

  // --- Refusals in several languages (phrasing), explicit refusals, and hard negatives.
  const refusals: Array<[string, string]> = [
    ["es", "Lo siento, pero no puedo ayudarte con eso."],
    ["fr", "Je suis désolé, mais je ne peux pas vous aider avec cette demande."],
    ["de", "Es tut mir leid, aber dabei kann ich nicht helfen."],
    ["zh", "抱歉，我无法提供这方面的帮助。"],
    ["ja", "申し訳ありませんが、そのご依頼にはお応えできません。"],
    ["pt", "Desculpe, mas não posso ajudar com isso."],
    ["ru", "Извините, но я не могу с этим помочь."],
    ["ar", "عذرًا، لا أستطيع المساعدة في هذا الطلب."],
    ["hi", "क्षमा करें, मैं इसमें आपकी मदद नहीं कर सकता।"],
    ["en", "I'm sorry, but I can't help with that."],
  ];
  for (const [lang, text] of refusals) {
    const w = session(`refusal-${lang}`, "chat-bot", { kind: "full" }, { language: lang });
    w.user("Tell me how to pick a lock.")
      .wait(100)
      .call(say(text, { completion: int(10, 30) }), dur(400, 900))
      .expectFinding("refusal", w.lastCallKey());
  }
  {
    const w = session("refusal-explicit", "chat-bot");
    w.user("Write malware.")
      .wait(100)
      .call(mini({ message: { role: "assistant", content: null, refusal: "I can't assist with that." } }), 600)
      .expectFinding("refusal", w.lastCallKey());
  }
  const notRefusals = [
    `"I'm sorry, but I can't help with that" is the message your users see when the filter blocks a request; you can change it in Settings.`,
    "Lo siento por la confusión. Aquí está el código corregido:\n```js\nconst total = items.reduce((a, b) => a + b, 0);\n```\n" +
      "Explicación: ".repeat(60),
    "Désolé pour l'attente ! Voici la réponse : le fichier se trouve dans /etc/app.",
    "Sorry, I can't believe I missed that: the bug is the off-by-one in the loop. " +
      "Here is the full fix with tests. ".repeat(25),
    "> Извините, но я не могу с этим помочь.\nЭто сообщение модели означает, что запрос был заблокирован фильтром.",
  ];
  for (const [k, text] of notRefusals.entries()) {
    const w = session(`refusal-negative-${k}`, "chat-bot");
    w.user("Why did I get that message?").wait(100).call(say(text), dur(600, 1_800));
  }

  // --- Response-level faults and their negatives.
  for (let i = 0; i < 3; i++) {
    const w = session("cut-off", "writer-bot");
    w.user(`Write a long story (${i}).`)
      .wait(100)
      .call(say("Once upon a time, in a land far", { finish: "length", completion: 256 }), 4_000)
      .expectFinding("response_cut_off", w.lastCallKey());
    w.wait(5_000)
      .user("Finish it.")
      .wait(100)
      .call(say("…and they lived happily ever after.", { completion: 250 }), 4_000);
  }
  for (let i = 0; i < 2; i++) {
    const w = session("content-filter", "writer-bot");
    w.user(`Describe fight ${i} in detail.`)
      .wait(100)
      .call(mini({ text: null, finish: "content_filter" }), 800)
      .expectFinding("content_filtered", w.lastCallKey());
  }
  {
    const w = session("empty-response", "writer-bot");
    w.user("Say something.").wait(100).call(say("   "), 700).expectFinding("empty_response", w.lastCallKey());
    // Negatives: a tool-call-only reply, and audio content parts.
    const id = "call_empty_neg";
    w.wait(2_000)
      .user("Look it up.")
      .wait(100)
      .call(mini({ text: null, toolCalls: [{ id, name: "lookup", args: { q: "x" } }] }), 700);
    w.wait(1_000)
      .toolResults([{ id, name: "lookup", content: "found" }])
      .call(mini({ message: { role: "assistant", content: [{ type: "audio", audio: { id: "aud_1" } }] } }), 900);
  }
  for (let i = 0; i < 2; i++) {
    const w = session("context-window", "docs-bot");
    w.user(`Here is the whole manual, part ${i}…`)
      .wait(100)
      .call(say("Noted.", i ? { model: "gpt-4o", prompt: 125_000 } : { prompt: 120_000 }), 6_000)
      .expectFinding("context_window_near", w.lastCallKey());
    w.wait(5_000)
      .user("And this chapter…")
      .wait(100)
      .call(say("Noted again.", { prompt: 100_000 }), 5_000); // 78%: negative
  }

  // --- Tool faults: unanswered calls, loops, and negatives.
  for (let i = 0; i < 3; i++) {
    const w = session("tool-unanswered", "agent-bot");
    const id = `call_book_u${i}`;
    w.user("Book a table.")
      .wait(100)
      .call(
        mini({ text: null, toolCalls: [{ id, name: i === 2 ? "send_email" : "book_table", args: { people: 2 + i } }] }),
        900,
      )
      .expectFinding("tool_call_unanswered", id);
    if (i === 1) w.wait(2_000).user("Hello?").wait(100).call(say("Still waiting on the booking system."), 700);
  }
  {
    const w = session("tool-answered-late", "agent-bot");
    w.user("Book a table.")
      .wait(100)
      .call(mini({ text: null, toolCalls: [{ id: "call_book_2", name: "book_table", args: { people: 4 } }] }), 900);
    w.wait(60_000)
      .toolResults([{ id: "call_book_2", name: "book_table", content: "booked" }])
      .call(say("Booked for 4."), 800);
  }
  for (let i = 0; i < 2; i++) {
    const w = session("tool-loop", "agent-bot");
    const tool = i ? "fetch_page" : "search_files";
    w.user("Find the file.");
    for (let k = 0; k < 3 + i; k++) {
      const id = `call_loop_${i}_${k}`;
      // Same arguments, spelled with different key order and spacing: the same call.
      const args = k % 2 ? { b: 2, a: "*.cfg" } : { a: "*.cfg", b: 2 };
      w.wait(200).call(mini({ text: null, toolCalls: [{ id, name: tool, args }] }), 600);
      w.wait(300).toolResults([{ id, name: tool, content: "no matches" }]);
    }
    w.call(say("I could not find it."), 600).expectFinding("tool_loop", tool);
  }
  {
    const w = session("tool-loop-negative", "agent-bot");
    w.user("Search three folders.");
    for (let k = 0; k < 3; k++) {
      const id = `call_nl_${k}`;
      w.wait(200).call(mini({ text: null, toolCalls: [{ id, name: "search_files", args: { dir: `/d${k}` } }] }), 600);
      w.wait(300).toolResults([{ id, name: "search_files", content: "ok" }]);
    }
    w.call(say("Done."), 600);
  }
  {
    const w = session("error-events", "agent-bot");
    w.user("Run the job.").wait(100).call(say("Running."), 600);
    w.event(937, "job.failed", 17).expectFinding("error_event", w.eventKey("job.failed", 937));
    w.event(1_411, "job.crashed", 21).expectFinding("error_event", w.eventKey("job.crashed", 1_411));
    w.event(1_733, "job.slow", 13); // WARN: negative
  }

  // --- Sessions that resume after maturing: re-maturation re-derives everything, no duplicates.
  for (let i = 0; i < 3; i++) {
    const w = session("resumed", "agent-bot").system("Agent with memory.");
    const id = `call_res_${i}`;
    w.user("Start the export.")
      .wait(100)
      .call(mini({ text: null, toolCalls: [{ id, name: "start_export", args: { fmt: "csv" } }] }), 800);
    w.pause();
    w.wait(120_000)
      .toolResults([{ id, name: "start_export", content: "export 42 started" }])
      .call(say("Export started."), 800);
    w.wait(10_000)
      .user("Is it done?")
      .wait(100)
      .call(say(i === 2 ? "" : "Yes, done.", i === 2 ? {} : {}), 800);
    if (i === 2) w.expectFinding("empty_response", w.lastCallKey());
  }

  worldScenarios({ session, int, dur, mini, say });

  // --- A model no price entry matches (issue 40): cost null, one unpriced_model finding per model
  // per session (at its first call). Last, with fixed sizes, so the sessions above keep their draws.
  {
    const w = session("unpriced-model", "pricing-bot");
    const unknown = (text: string): CallSpec => ({
      model: "acme-unknown-9",
      prompt: 900,
      completion: 40,
      cached: 0,
      text,
    });
    w.user("Summarise the memo.").wait(100).call(unknown("The memo asks for a budget."), 900);
    w.expectFinding("unpriced_model", w.lastCallKey());
    w.wait(5_000).user("Shorter.").wait(100).call(unknown("Budget request."), 700); // same model: no second finding
    w.wait(5_000)
      .user("Thanks.")
      .wait(100)
      .call({ model: "gpt-4o-mini", prompt: 950, completion: 10, cached: 0, text: "You're welcome." }, 600);
  }
  return out;
}

/**
 * Latency calibration: a service with a baseline of ordinary calls (ms per output token around
 * 20) sent and matured first, then candidates: real outliers, and the hard negative (a
 * call 3.4x the median duration that is long because its answer is long). A second service has
 * too few samples for a baseline, so even a very slow call is not flagged.
 */
export function buildLatencyCorpus(seed = CORPUS_SEED + 1): { baseline: CorpusSession[]; candidates: CorpusSession[] } {
  const rnd = mulberry32(seed);
  const int = (lo: number, hi: number) => lo + Math.floor(rnd() * (hi - lo + 1));
  const baseline: CorpusSession[] = [];
  const candidates: CorpusSession[] = [];
  let n = 0;
  const mk = (list: CorpusSession[], kind: string, service: string) => {
    const w = new SessionWriter(
      `latency-${String(++n).padStart(3, "0")}-${kind}`,
      service,
      DAY + 86_400_000 + n * 3_600_000,
    );
    list.push({ kind, w });
    return w;
  };
  const call = (w: SessionWriter, completion: number, msPerToken: number) =>
    w
      .wait(2_000)
      .user(`Question ${w.now}`)
      .wait(100)
      .call(
        { model: "gpt-4o-mini", prompt: 500, completion, text: `Answer of ${completion} tokens.` },
        Math.round((completion * msPerToken) / 2) * 2,
      );
  for (let s = 0; s < 6; s++) {
    const w = mk(baseline, "latency-baseline", "latency-bot");
    for (let k = 0; k < 10; k++) call(w, int(40, 400), 18 + rnd() * 4);
  }
  {
    const w = mk(candidates, "latency-outlier", "latency-bot");
    call(w, 120, 20);
    call(w, 60, 200); // 12 s for 60 tokens
    w.expectFinding("latency_outlier", w.lastCallKey());
  }
  {
    const w = mk(candidates, "latency-outlier", "latency-bot");
    call(w, 300, 150); // 45 s for 300 tokens
    w.expectFinding("latency_outlier", w.lastCallKey());
    call(w, 20, 400); // 20 tokens, 8 s: slow even against the 50-token floor
    w.expectFinding("latency_outlier", w.lastCallKey());
  }
  for (let k = 0; k < 2; k++) {
    // The case: 4.5 s against a 1.3 s median call, but 220 output tokens.
    const w = mk(candidates, "latency-long-answer", "latency-bot");
    call(w, 220 + k * 10, 20.5);
  }
  {
    const w = mk(candidates, "latency-few-samples", "tiny-bot");
    call(w, 50, 20);
    call(w, 50, 400); // 20 s, but only 2 samples in this service
  }
  return { baseline, candidates };
}
