import { describe, expect, test } from "bun:test";
import { resolveDetectorConfig } from "@cellar/shared/analysis/detector-config";
import { assistant, trace, user } from "../../../../test/fixtures/analysis-history.ts";
import { analyzeSession } from "./session.ts";

const call = (at: number, model: string, extra: Record<string, unknown> = {}) =>
  trace({ at, model, messages: [user("hi")], responses: [{ message: assistant("Hello."), model, ...extra }] });
const unpriced = (traces: any[], overrides?: unknown) =>
  analyzeSession(traces, [], overrides ? { config: resolveDetectorConfig(overrides) } : {}).findings.filter(
    (f) => f.detector === "unpriced_model",
  );

describe("unpriced_model", () => {
  test("names the model and the price book's reason, once per model per session", () => {
    const found = unpriced([call(0, "acme-unknown-9"), call(1, "acme-unknown-9"), call(2, "zeta-7")]);
    expect(found.map((f) => f.evidence.model)).toEqual(["acme-unknown-9", "zeta-7"]);
    expect(found[0]).toMatchObject({
      severity: "low",
      title: "Call not priced (acme-unknown-9)",
      evidence: { reason: 'unknown model "acme-unknown-9" (provider openai): no price entry matches it' },
    });
    // Keyed on the model: the same model in another session groups into the same issue.
    const again = unpriced([call(5, "acme-unknown-9")]);
    expect(again[0].fingerprint).toBe(found[0].fingerprint);
    expect(found[1].fingerprint).not.toBe(found[0].fingerprint);
  });

  test("priced calls never fire; the detector can be disabled", () => {
    expect(unpriced([call(0, "gpt-4o-mini"), call(1, "gpt-4o")])).toEqual([]);
    expect(unpriced([call(0, "acme-unknown-9")], { unpriced_model: { enabled: false } })).toEqual([]);
  });
});
