/**
 * Opt-in redactors (applied to every string of a payload before it is queued) and the truncation
 * that keeps an oversized payload under the ingest body limit instead of earning a 413.
 */

export type RedactorName = "emails" | "cardNumbers" | "secrets";

const EMAIL = /(?<![\\\w.%+-])[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}/g;
const CARD = /(?<![\w\\])\d(?:[ -]?\d){12,18}(?!\w)/g;
// OpenAI/Anthropic keys, GitHub tokens, AWS access key ids, Slack tokens, JWTs, bearer headers,
// and this service's own keys.
const SECRET =
  /\b(?:sk-(?:ant-|proj-)?[A-Za-z0-9_-]{16,}|gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{30,}|AKIA[0-9A-Z]{16}|xox[abprs]-[A-Za-z0-9-]{10,}|eyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}|cel_[tp]k_[A-Za-z0-9_-]{16,}|svc-ing-[sc]-[A-Za-z0-9_.-]{16,})|(?<=\bBearer )[A-Za-z0-9._~+/-]{16,}=*/g;

function luhn(digits: string): boolean {
  let sum = 0;
  for (let i = 0; i < digits.length; i++) {
    let d = digits.charCodeAt(digits.length - 1 - i) - 48;
    if (i % 2 === 1) {
      d *= 2;
      if (d > 9) d -= 9;
    }
    sum += d;
  }
  return sum % 10 === 0;
}

const REDACTORS: Record<RedactorName, (text: string) => string> = {
  emails: (t) => (t.includes("@") ? t.replace(EMAIL, "[email]") : t),
  cardNumbers: (t) => t.replace(CARD, (m) => (luhn(m.replace(/[ -]/g, "")) ? "[card number]" : m)),
  secrets: (t) => t.replace(SECRET, "[secret]"),
};

/** A function applying the named redactors to one string; null when none is on. */
export function stringRedactor(names: readonly RedactorName[]): ((text: string) => string) | null {
  const fns = names.map((n) => {
    const fn = REDACTORS[n];
    if (!fn) throw new Error(`unknown redactor ${JSON.stringify(n)} (emails, cardNumbers, secrets)`);
    return fn;
  });
  if (fns.length === 0) return null;
  return (text) => {
    let out = text;
    for (const fn of fns) out = fn(out);
    return out;
  };
}

/** A deep copy of `value` with `fn` applied to every string (keys are left alone). */
export function mapStrings(value: unknown, fn: (text: string) => string, depth = 0): unknown {
  if (typeof value === "string") return fn(value);
  if (value === null || typeof value !== "object" || depth > 64) return value;
  if (value instanceof Date) return value;
  if (Array.isArray(value)) return value.map((v) => mapStrings(v, fn, depth + 1));
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(value)) out[key] = mapStrings((value as Record<string, unknown>)[key], fn, depth + 1);
  return out;
}

/** The first `keep` UTF-16 units (never half a surrogate pair) and the marker. */
function cutAt(s: string, keep: number): string {
  const end = s.charCodeAt(keep - 1) >= 0xd800 && s.charCodeAt(keep - 1) <= 0xdbff ? keep - 1 : keep;
  return s.slice(0, end) + TRUNCATION_MARKER.replace("%d", String(s.length - end));
}

export const TRUNCATION_MARKER = "...[truncated by cellar: %d characters]";

/** UTF-8 length of `text` without allocating for ASCII-only text. */
export function utf8Length(text: string): number {
  let n = text.length;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c < 0x80) continue;
    if (c < 0x800) n += 1;
    else if (c >= 0xd800 && c <= 0xdbff) {
      n += 2;
      i++;
    } else n += 2;
  }
  return n;
}

/**
 * `json` (the payload's JSON) if it fits `maxBytes`, else the payload with its longest strings
 * cut (each with a marker saying how much was cut) until it fits; null when even that fails
 * (the payload's structure alone is too large).
 */
export function fitToLimit(payload: unknown, json: string, maxBytes: number): string | null {
  if (json.length * 3 <= maxBytes || utf8Length(json) <= maxBytes) return json;
  for (let keep = Math.floor(maxBytes / 4); keep >= 64; keep = Math.floor(keep / 2)) {
    const cut = JSON.stringify(mapStrings(payload, (s) => (s.length > keep ? cutAt(s, keep) : s)));
    if (utf8Length(cut) <= maxBytes) return cut;
  }
  return null;
}
