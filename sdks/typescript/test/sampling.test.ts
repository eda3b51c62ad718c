// Session sampling keeps its rate for any id scheme (issue 37): the property over 2,000 prefixes
// of sequential counters, the schemes users have (counters, UUIDs, e-mails, timestamps) at 10,000
// ids each, and the shared vectors (sdks/sampling-vectors.json) that every SDK checks.
import { describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { fmix32, fnv1a32, sampleHash, sessionSampled } from "../src/sampling.ts";
import { VECTORS_PATH, vectors } from "../scripts/sampling-vectors.ts";
import { SAMPLING_RATES, samplingSchemes } from "./sampling-schemes.ts";

const share = (ids: string[], rate: number) => ids.filter((id) => sessionSampled(id, rate)).length / ids.length;

describe("session sampling", () => {
  test("reference values: FNV-1a and MurmurHash3's fmix32", () => {
    expect(fnv1a32("")).toBe(0x811c9dc5);
    expect(fnv1a32("a")).toBe(0xe40c292c);
    expect(fnv1a32("foobar")).toBe(0xbf9cf968);
    expect(fmix32(0)).toBe(0);
    expect(fmix32(1)).toBe(0x514e28b7);
    expect(sampleHash("a")).toBe(fmix32(fnv1a32("a")));
  });

  test("the shared vector file is what this SDK computes", () => {
    const file = JSON.parse(readFileSync(VECTORS_PATH, "utf8"));
    expect(file.vectors.length).toBeGreaterThan(80);
    expect(file.vectors).toEqual(vectors());
  });

  test("2,000 prefixes x 1,000 sequential counters at rate 0.5: every prefix near the rate", () => {
    const rate = 0.5;
    const perPrefix = 1000;
    const shares: number[] = [];
    for (let p = 0; p < 2000; p++) {
      const prefix = p % 2 ? `conv-${p.toString(36)}-` : `${p}:session_`;
      let kept = 0;
      for (let i = 0; i < perPrefix; i++) if (sessionSampled(`${prefix}${i}`, rate)) kept++;
      shares.push(kept / perPrefix);
    }
    const mean = shares.reduce((a, b) => a + b, 0) / shares.length;
    const sd = Math.sqrt(shares.reduce((a, s) => a + (s - mean) ** 2, 0) / shares.length);
    const binomialSd = Math.sqrt((rate * (1 - rate)) / perPrefix);
    const worst = Math.max(...shares.map((s) => Math.abs(s - rate)));
    console.log(
      `2,000 prefixes x ${perPrefix} counters at ${rate}: mean ${(mean * 100).toFixed(2)}%, sd ${(sd * 100).toFixed(2)} points (binomial ${(binomialSd * 100).toFixed(2)}), worst prefix ${(worst * 100).toFixed(1)} points off`,
    );
    expect(Math.abs(mean - rate)).toBeLessThan(0.005);
    // A fair coin per id spreads the shares by the binomial sd: no prefix-dependent bias on top.
    expect(sd).toBeLessThan(binomialSd * 1.15);
    expect(worst).toBeLessThan(0.07); // 4.4 binomial sd at 1,000 ids
  });

  test("every id scheme at 10,000 ids keeps each rate within 3 points", () => {
    const rows: string[] = [];
    for (const [name, ids] of Object.entries(samplingSchemes(10_000))) {
      const figures = SAMPLING_RATES.map((rate) => {
        const kept = share(ids, rate);
        expect(Math.abs(kept - rate)).toBeLessThan(0.03);
        return `${rate}: ${(kept * 100).toFixed(1)}%`;
      });
      rows.push(`${name.padEnd(22)} ${figures.join("  ")}`);
    }
    console.log(`kept share per id scheme (10,000 ids each)\n${rows.join("\n")}`);
  });
});
