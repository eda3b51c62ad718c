import { Buffer } from "node:buffer";

/**
 * A JSON value as Postgres prints it after storing it as jsonb (`value::jsonb::text`), without
 * the round trip: keys in jsonb's order (shorter first, then bytewise in UTF-8), `", "` and `": "`
 * between members, strings escaped as Postgres escapes them (`"`, `\`, \b \f \n \r \t, other
 * control characters as \u00xx; nothing else), and numbers as `numeric` prints them (plain
 * decimals, never an exponent). Values JSON cannot hold print as JSON.stringify drops or nulls
 * them. Checked against Postgres on generated values (test/upgrade-transcript.test.ts).
 */
export function jsonbText(value: unknown): string {
  if (value === null || value === undefined) return "null";
  switch (typeof value) {
    case "string":
      return quote(value);
    case "number":
      return Number.isFinite(value) ? numericText(value) : "null";
    case "boolean":
      return value ? "true" : "false";
    case "object": {
      if (Array.isArray(value)) return `[${value.map((v) => (v === undefined ? "null" : jsonbText(v))).join(", ")}]`;
      const keys = Object.keys(value)
        .filter((k) => (value as Record<string, unknown>)[k] !== undefined)
        .sort(keyOrder);
      return `{${keys.map((k) => `${quote(k)}: ${jsonbText((value as Record<string, unknown>)[k])}`).join(", ")}}`;
    }
    default:
      return "null";
  }
}

function keyOrder(a: string, b: string): number {
  const la = Buffer.byteLength(a);
  const lb = Buffer.byteLength(b);
  if (la !== lb) return la - lb;
  // Both ASCII (as many bytes as UTF-16 units): code-unit order is byte order, no copies needed.
  if (la === a.length && lb === b.length) return a < b ? -1 : a > b ? 1 : 0;
  return Buffer.compare(Buffer.from(a), Buffer.from(b));
}

const ESCAPES: Record<string, string> = {
  '"': '\\"',
  "\\": "\\\\",
  "\b": "\\b",
  "\f": "\\f",
  "\n": "\\n",
  "\r": "\\r",
  "\t": "\\t",
};

/** A lone surrogate (JSON.stringify escapes it, Postgres never holds one: left as it is). */
const LONE_SURROGATE = /[\ud800-\udfff]/u;

function quote(s: string): string {
  // JSON.stringify escapes exactly Postgres' set (the same short forms, \u00xx in lowercase) but
  // for lone surrogates, and does it natively.
  if (!LONE_SURROGATE.test(s)) return JSON.stringify(s);
  // biome-ignore lint/suspicious/noControlCharactersInRegex: the control characters are what is escaped
  return `"${s.replace(/["\\\u0000-\u001f]/g, (c) => ESCAPES[c] ?? `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`)}"`;
}

/** A double's shortest text (as JSON.stringify writes it) as `numeric` prints it: no exponent. */
function numericText(n: number): string {
  const text = String(n);
  const e = text.indexOf("e");
  if (e < 0) return text;
  const sign = text.startsWith("-") ? "-" : "";
  const mantissa = text.slice(sign.length, e);
  const exponent = Number(text.slice(e + 1));
  const point = mantissa.indexOf(".");
  const digits = mantissa.replace(".", "");
  // Position of the decimal point in `digits` after applying the exponent.
  const at = (point < 0 ? mantissa.length : point) + exponent;
  if (at <= 0) return `${sign}0.${"0".repeat(-at)}${digits}`;
  if (at >= digits.length) return `${sign}${digits}${"0".repeat(at - digits.length)}`;
  return `${sign}${digits.slice(0, at)}.${digits.slice(at)}`;
}
