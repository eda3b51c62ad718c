import type { ResolveDns } from "@cellar/shared/webhooks/destination";

/** A public address (example.com's) the webhook tests' receiver hosts resolve to. */
export const PUBLIC_ADDRESS = "93.184.216.34";

/** What one host answers: its addresses, a script of answers in turn, or a function. */
export type DnsAnswer = string[] | { script: string[][] } | (() => Promise<string[]>);

/**
 * The one DNS stub of the tests (destinations are checked through an injected `resolveDns`). A host
 * in `answers` (read at each lookup, so a test may add hosts later) answers its entry: a list of
 * addresses, a script answered in turn whose last entry repeats, or a function (a slow or failing
 * resolver). Any other host answers `fallback`, or ENOTFOUND when `fallback` is null.
 */
export function stubDns(
  answers: Record<string, DnsAnswer> = {},
  fallback: string[] | null = [PUBLIC_ADDRESS],
): ResolveDns {
  return async (host) => {
    const answer = answers[host];
    if (typeof answer === "function") return answer();
    if (Array.isArray(answer)) return answer;
    if (answer) return answer.script.length > 1 ? answer.script.shift()! : answer.script[0];
    if (!fallback) throw Object.assign(new Error("not found"), { code: "ENOTFOUND" });
    return fallback;
  };
}
