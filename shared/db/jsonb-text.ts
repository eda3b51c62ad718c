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
    case "object":
      return Array.isArray(value) ? arrayText(value) : objectText(value as Record<string, unknown>);
    default:
      return "null";
  }
}

// Loops appending to one string (no closure, no intermediate arrays): a page prints 100 items.
function arrayText(a: unknown[]): string {
  let out = "[";
  for (let i = 0; i < a.length; i++) {
    if (i > 0) out += ", ";
    // A hole prints as nothing (as Array.map and join leave it), undefined as null.
    if (i in a) out += a[i] === undefined ? "null" : jsonbText(a[i]);
  }
  return `${out}]`;
}

function objectText(o: Record<string, unknown>): string {
  const keys: string[] = [];
  for (const k of Object.keys(o)) if (o[k] !== undefined) keys.push(k);
  if (keys.length > 1) keys.sort(keyOrder);
  let out = "{";
  for (let i = 0; i < keys.length; i++) {
    if (i > 0) out += ", ";
    out += `${quote(keys[i])}: ${jsonbText(o[keys[i]])}`;
  }
  return `${out}}`;
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
