import { Buffer } from "node:buffer";
import { deflateRawSync, inflateRawSync } from "node:zlib";

/**
 * Trace payloads as stored (docs/performance.md, "Payloads compressed by the app"): the JSON
 * text, keys in jsonb's order, deflated (raw, level 6) by the processor into
 * `trace_payloads.payload_z` (bytea). Measured on the bench's payloads (bench/app-compression.ts):
 * 0.25x the raw JSON against 0.43x for jsonb with Postgres' pglz, and about 20 us of Postgres
 * CPU per insert against 170 us (jsonb parse + pglz), for about 45-60 us of app CPU; node:zlib
 * runs under Bun and Deno alike. Level 1 (until the fourth round of issue 28) stored 0.34x for
 * about 25 us less: bytes were the target left, so the level is a storage trade
 * (docs/performance.md, "Payloads at level 6"). A preset dictionary would store 0.20x, but
 * Deno's node:zlib ignores `dictionary` both ways, and a JS deflate costs 150-200 us. Rows written before migration 0015 keep their jsonb `payload` until
 * the processor's backfill rewrites them (apps/processor/src/upgrade/payload-backfill.ts); every
 * read goes through decodePayload, which takes either.
 */

/** jsonb's key order: shorter keys first (in UTF-8 bytes), then bytewise. */
function jsonbKeyOrder(a: string, b: string): number {
  const la = Buffer.byteLength(a);
  const lb = Buffer.byteLength(b);
  if (la !== lb) return la - lb;
  return Buffer.compare(Buffer.from(a), Buffer.from(b));
}

/** jsonbKeyOrder for keys of ASCII only: their UTF-8 bytes are their UTF-16 code units. */
const asciiKeyOrder = (a: string, b: string) => a.length - b.length || (a < b ? -1 : a > b ? 1 : 0);
const NON_ASCII = /[^\x00-\x7f]/;

/**
 * An object's keys in jsonb's order. The comparison in UTF-8 bytes (two buffers per comparison)
 * was the larger part of encoding a payload; keys of ASCII only (nearly all) compare as they are.
 */
function jsonbKeys(value: object): string[] {
  const keys = Object.keys(value);
  if (keys.length < 2) return keys;
  for (const key of keys) if (NON_ASCII.test(key)) return keys.sort(jsonbKeyOrder);
  if (keys.length > 16) return keys.sort(asciiKeyOrder);
  // Insertion sort: a payload's objects have a few keys, often in order already.
  for (let i = 1; i < keys.length; i++) {
    const key = keys[i];
    let j = i - 1;
    while (j >= 0 && asciiKeyOrder(keys[j], key) > 0) {
      keys[j + 1] = keys[j];
      j--;
    }
    keys[j + 1] = key;
  }
  return keys;
}

/**
 * A value with every object's keys in the order Postgres jsonb keeps them: a payload read back
 * serializes exactly as it did when it was stored as jsonb (platform answers unchanged).
 */
export function inJsonbOrder(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(inJsonbOrder);
  if (value === null || typeof value !== "object") return value;
  const out: Record<string, unknown> = {};
  for (const key of jsonbKeys(value)) {
    const v = (value as Record<string, unknown>)[key];
    if (v !== undefined) out[key] = inJsonbOrder(v);
  }
  return out;
}

/** The stored bytes of a payload. */
export function encodePayload(payload: unknown): Buffer {
  return encodePayloadSized(payload).stored;
}

/** The stored bytes of a payload, and its size as JSON text (UTF-8 bytes): what `stored` inflates to. */
export function encodePayloadSized(payload: unknown): { stored: Buffer; jsonBytes: number } {
  const json = Buffer.from(JSON.stringify(inJsonbOrder(payload)), "utf8");
  return { stored: deflateRawSync(json, { level: 6 }), jsonBytes: json.length };
}

/** A stored payload back: `payload_z` when the row has it, else the jsonb `payload` of an older row. */
export function decodePayload<T = Record<string, any>>(row: { payload?: unknown; payload_z?: Uint8Array | null }): T {
  if (row.payload_z) return JSON.parse(inflateRawSync(row.payload_z).toString("utf8")) as T;
  return row.payload as T;
}

/** Token usage summed over a payload's responses, as the platform reports it. */
export function usageTotals(payload: { responses?: unknown }): { prompt: number; completion: number; total: number } {
  const sum = { prompt: 0, completion: 0, total: 0 };
  if (!Array.isArray(payload.responses)) return sum;
  for (const r of payload.responses) {
    const usage = (r as { usage?: Record<string, unknown> } | null)?.usage;
    if (!usage || typeof usage !== "object") continue;
    if (typeof usage.prompt_tokens === "number") sum.prompt += usage.prompt_tokens;
    if (typeof usage.completion_tokens === "number") sum.completion += usage.completion_tokens;
    if (typeof usage.total_tokens === "number") sum.total += usage.total_tokens;
  }
  return sum;
}
