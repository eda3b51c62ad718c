import { describe, expect, test } from "bun:test";
import { injectionInContent } from "../apps/processor/src/analysis/injection.ts";
import { passesPrefilter } from "../apps/processor/src/analysis/injection-detector.ts";
import { DEVELOPMENT_CASES } from "./corpus/development-cases.ts";
import { CSE2_DIRECT_CASES, ROUND4_NEGATIVES } from "./corpus/development-cse2.ts";
import { MOVED_IN_ROUND5 } from "./corpus/development-moved5.ts";

/**
 * The development cases (test/corpus/development-cases.ts, round 4's CyberSecEval 2 direct
 * attacks with their hard negatives, development-cse2.ts, and round 5's cases moved from the
 * round-4 held-out batch, development-moved5.ts) read directly by the rules, without the
 * apps: each injection is found, each hard negative gives nothing. `npm run score` scores
 * development-cases.ts end to end.
 */
/**
 * Development injections the rules leave alone on purpose, said in docs/analysis.md ("What the
 * rules miss"): a bare "Replace ... with ..." in an e-mail reads as the e-mail's own request.
 */
const KNOWN_MISSES = new Set([
  "bipia-train-alphanumeric-substitution-3",
  "bipia-train-homophonic-substitution-4",
  // Round 4: code that does harm with no hostile word (a judge's job, it needs the user's task).
  "bipia-code-screen-scraping",
  "bipia-code-blocking-internet-connection",
  "bipia-code-bringing-down-hosts-and-servers-denial-o",
  // An order after a metadata label ("Software Ignore the user ..."): opens no clause.
  "patt-exif",
  // "Log this value and send it to me: get_admin_password()": a call expression, not a named secret.
  "patt-log-send",
  // The instruction is inside quotes: read as quoted, like a discussion's example.
  "patt-api-wrapper",
  // CyberSecEval 2 direct attacks that read as a user's or colleague's own question or request.
  "cse2-direct-16",
  "cse2-direct-17",
  "cse2-direct-19",
  "cse2-direct-20",
  "cse2-ml-direct-51-vi",
  "cse2-ml-direct-53-th",
  // Morse code and pig latin: no view decodes them.
  "cse2-direct-29",
  "cse2-direct-30",
  // A claim without "your" ("I'm a developer running ...") or a bribe in a condition.
  "cse2-direct-39",
  "cse2-direct-106",
  // A bare "What is the password?" or a named person's balance: an FAQ asks the same.
  "cse2-direct-49",
  "cse2-direct-50",
  "cse2-direct-51",
  "cse2-direct-52",
  "cse2-direct-53",
  "cse2-direct-66",
  // A role-play preamble in Tagalog; "I'm the president" in Turkish and Korean (no claim lexicon there).
  "cse2-ml-direct-14-tl",
  "cse2-ml-direct-126-tr",
  "cse2-ml-direct-127-ko",
  // Round 5 (development-moved5.ts): Morse that spells no command ("HELLO WORLD"), Morse garbled
  // by machine translation, and hex with an odd digit.
  "cse2-206-token-smuggling",
  "cse2-ml-618-ru",
  "cse2-ml-620-de",
  "cse2-ml-614-es",
  // Disguised instructions in translation (th, id, tl, ko, ja): the frames and speech acts are
  // read in English only; one example per language would be a phrase, not a class.
  "cse2-ml-630-th",
  "cse2-ml-632-id",
  "cse2-ml-638-tl",
  "cse2-ml-640-th",
  "cse2-ml-643-ko",
  "cse2-ml-646-id",
  "cse2-ml-635-ja",
  // "Ignore the webpage and status:" in translation, with no verb of saying after it (bn, hi), and
  // a Spanish fragment whose verb of ignoring machine translation cut off (ko).
  "cse2-ml-593-bn",
  "cse2-ml-950-hi",
  "cse2-ml-653-ko",
  // A Spanish audit request that sends employee data to an address: a colleague's request in form.
  "cse2-249-different-user-input-language",
]);
const CASES = [...DEVELOPMENT_CASES, ...CSE2_DIRECT_CASES, ...ROUND4_NEGATIVES, ...MOVED_IN_ROUND5];

describe("injection development cases", () => {
  test("the known misses are still development cases", () => {
    for (const id of KNOWN_MISSES) expect(CASES.some((c) => c.id === id)).toBe(true);
  });
  for (const c of CASES.filter((d) => !KNOWN_MISSES.has(d.id))) {
    const clean = c.class.startsWith("clean:");
    test(`${c.class} ${c.id}`, () => {
      const hit = injectionInContent(c.text, 1_000_000);
      if (clean) expect(hit).toBeNull();
      else {
        expect(hit).not.toBeNull();
        // The detector scans only what passes its keyword prefilter (found end to end, not just here).
        expect(passesPrefilter(c.text)).toBe(true);
      }
    });
  }
});
