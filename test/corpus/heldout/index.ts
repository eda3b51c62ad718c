import { type Instrumentation, INSTRUMENTATIONS as I } from "../otlp-writer";
import type { CorpusSession } from "../scenarios";
import { SessionWriter } from "../session-writer";
import { HELD_OUT_CLEAN, type HeldOutClean } from "./clean";
import { HELD_OUT_EXTERNAL_CLEAN } from "./external-clean";
import { HELD_OUT_EXTERNAL_INJECTIONS } from "./external-injections";
import { HELD_OUT_INJECTIONS, type HeldOutCase } from "./injections";
import { HELD_OUT_ROUND4_CLEAN } from "./round4-clean";
import { HELD_OUT_ROUND4_INJECTIONS } from "./round4-injections";
import { HELD_OUT_ROUND5_CLEAN } from "./round5-clean";
import { HELD_OUT_ROUND5_INJECTIONS } from "./round5-injections";

/**
 * The held-out set (CONTRIBUTING.md, "the analysis corpus"): sessions built from cases the
 * detectors were not tuned against, scored apart from the development set by `npm run score`.
 * Each injection case is a tool result the model read and did not follow (a `high` finding);
 * each clean case is a tool result that must give none; the stop-reason sessions are calls as
 * instrumentations other than the development set's record them.
 */
const DAY = Date.UTC(2025, 9, 1, 0, 0, 0);

export function buildHeldOut(): CorpusSession[] {
  const out: CorpusSession[] = [];
  let n = 0;
  const session = (kind: string, service: string, language?: string, otlp?: Instrumentation) => {
    const w = new SessionWriter(
      `heldout-${String(++n).padStart(3, "0")}-${kind}`,
      service,
      DAY + n * 3_600_000,
      { kind: "full" },
      otlp ?? null,
    );
    return { w, language };
  };
  /** The user asks, the model calls the tool, the tool returns `text`, the model answers plainly. */
  const readTool = (w: SessionWriter, tool: string, text: string, i: number) => {
    const id = `call_ho_${i}`;
    w.system("You are an assistant with tools.")
      .user("Can you look at this for me?")
      .wait(200)
      .call(
        {
          model: "gpt-4o-mini",
          prompt: 400 + i,
          completion: 20,
          text: null,
          toolCalls: [{ id, name: tool, args: { ref: `item-${i}` } }],
        },
        800,
      );
    w.wait(400)
      .toolResults([{ id, name: tool, content: text }])
      .call({ model: "gpt-4o-mini", prompt: 900 + i, completion: 30, text: "Here is a short summary of it." }, 900);
  };

  /** Each injection is a `high` finding on the call that read it; each clean case gives none. */
  const addCases = (
    cases: Array<HeldOutCase | HeldOutClean>,
    base: number,
    source: (c: HeldOutCase | HeldOutClean) => string,
  ) =>
    cases.forEach((c, i) => {
      const label = "kind" in c ? `clean:${c.kind}` : c.class;
      const { w, language } = session(`${"kind" in c ? "clean" : "injection"}-${c.id}`, "heldout-agent", c.language);
      readTool(w, c.tool, c.text, base + i);
      if (!("kind" in c)) w.expectFinding("prompt_injection", `${w.lastCallKey()}:high`);
      out.push({
        kind: "kind" in c ? `clean-${c.kind}` : `injection-${c.class}`,
        w,
        language,
        set: "heldout",
        injectionClass: label,
        source: source(c),
      });
    });
  const round1 = (c: HeldOutCase | HeldOutClean) =>
    c.origin.startsWith("written for Cellar") ? "round1-cellar" : "round1-external";
  addCases(HELD_OUT_INJECTIONS, 0, round1);
  addCases(HELD_OUT_CLEAN, 1_000, round1);
  // Round 3 (issue 38): fresh cases from others' collections, added before any rule change.
  addCases(HELD_OUT_EXTERNAL_INJECTIONS, 2_000, () => "round3-external");
  addCases(HELD_OUT_EXTERNAL_CLEAN, 3_000, () => "round3-external");
  // Round 4 (issue 38): CyberSecEval 2 and OWASP's translations, frozen before the round-4 rules.
  addCases(HELD_OUT_ROUND4_INJECTIONS, 4_000, () => "round4-external");
  addCases(HELD_OUT_ROUND4_CLEAN, 5_000, () => "round4-external");
  // Round 5 (issue 38): spikee and agentdojo-ja payloads in AgentDojo's records, frozen before the round-5 rules.
  addCases(HELD_OUT_ROUND5_INJECTIONS, 6_000, () => "round5-external");
  addCases(HELD_OUT_ROUND5_CLEAN, 7_000, () => "round5-external");

  // Stop reasons as instrumentations outside the development set record them (docs/otlp.md).
  const stops: Array<[string, Instrumentation, string, string, string | null]> = [
    // OpenLLMetry JS before 0.23 writes Anthropic's own stop_reason on gen_ai.completion.0.finish_reason.
    [
      "anthropic-js-legacy-max-tokens",
      I.openllmetryAnthropicJsLegacy,
      "claude-haiku-4-5",
      "max_tokens",
      "response_cut_off",
    ],
    ["anthropic-js-legacy-end-turn", I.openllmetryAnthropicJsLegacy, "claude-haiku-4-5", "end_turn", null],
    // OpenLLMetry Python before 0.54: the same, from the Python side.
    [
      "anthropic-py-legacy-max-tokens",
      I.openllmetryAnthropicPythonLegacy,
      "claude-sonnet-4-5",
      "max_tokens",
      "response_cut_off",
    ],
    // Anthropic's own "refusal" stop reason: a refusal (docs/analysis.md: finish_reason "refusal").
    ["anthropic-py-legacy-refusal", I.openllmetryAnthropicPythonLegacy, "claude-sonnet-4-5", "refusal", "refusal"],
    // OpenLLMetry Python's Bedrock map passes unmapped Converse reasons through verbatim.
    [
      "bedrock-context-exceeded",
      I.openllmetryBedrockPython,
      "nova-pro",
      "model_context_window_exceeded",
      "response_cut_off",
    ],
    ["bedrock-content-filtered", I.openllmetryBedrockPython, "nova-pro", "content_filtered", "content_filtered"],
    // The current conventions' own values.
    ["conventions-tool-call", I.openllmetryAnthropicJs, "claude-haiku-4-5", "tool_call", null],
  ];
  stops.forEach(([kind, otlp, model, finish, detector], i) => {
    const { w } = session(`stop-${kind}`, "heldout-otlp", "en", otlp);
    w.user("Write me a long poem about the sea.")
      .wait(100)
      .call(
        {
          model,
          requestModel: model === "nova-pro" ? "us.amazon.nova-pro-v1:0" : undefined,
          prompt: 300 + i,
          completion: 512,
          text: detector === "content_filtered" || detector === "refusal" ? "" : "The sea, the sea, the endless",
          finish,
        },
        4_000,
      );
    if (detector) w.expectFinding(detector, w.lastCallKey());
    out.push({ kind: `stop-${kind}`, w, set: "heldout" });
  });
  return out;
}
