import { badRequest, HttpError } from "@cellar/shared/errors";
import { describeField, escapePointer, inspectJson, JSON_LIMITS } from "@cellar/shared/json-limits";
import { readCapped as readCappedStream } from "@cellar/shared/read-capped";

/** Structural limits on a parsed body, checked before the schema (docs/ingestion.md, "Limits"). */
export const MAX_JSON_DEPTH = JSON_LIMITS.maxDepth;

const JSON_TYPE = /^application\/json\s*(;\s*charset\s*=\s*"?utf-8"?\s*)?$/i;

export function tooLarge(maxBytes: number): HttpError {
  return new HttpError(413, `body exceeds the limit of ${maxBytes} bytes`);
}

/** 415 unless the body is declared as JSON (UTF-8, the only charset JSON allows on the wire). */
export function requireJsonContentType(request: Request): void {
  const type = request.headers.get("content-type");
  if (!type) throw new HttpError(415, "content-type header is required and must be application/json");
  if (!JSON_TYPE.test(type.trim()))
    throw new HttpError(415, "content-type must be application/json (charset utf-8 if given)");
}

/** A request body as it came over the wire: its bytes, and whether they are gzip (Content-Encoding). */
export interface WireBody {
  bytes: Uint8Array;
  gzip: boolean;
}

/**
 * The request body as sent, at most `maxBytes` of it: a declared Content-Length over the limit is
 * refused before reading, a chunked body is cut off as soon as it passes the limit; a coding
 * other than gzip or none gets 415. Not inflated (inflateBody).
 */
export async function readWireBody(request: Request, maxBytes: number): Promise<WireBody> {
  const declared = request.headers.get("content-length");
  if (declared !== null && Number(declared) > maxBytes) throw tooLarge(maxBytes);
  const coding = (request.headers.get("content-encoding") ?? "identity").trim().toLowerCase();
  if (coding !== "identity" && coding !== "gzip")
    throw new HttpError(
      415,
      `content-encoding ${JSON.stringify(coding.slice(0, 50))} is not supported; use gzip or none`,
    );
  let bytes: Uint8Array;
  if (declared !== null && request.body) {
    bytes = new Uint8Array(await request.arrayBuffer());
    if (bytes.byteLength > maxBytes) throw tooLarge(maxBytes);
  } else {
    bytes = await readCapped(request.body, maxBytes);
  }
  return { bytes, gzip: coding === "gzip" };
}

/**
 * About how many bytes the body is once inflated, to choose where it is worked (offload/), never
 * to bound anything: a gzip body's own trailer says (ISIZE, its last member's size mod 2^32; a
 * client can misstate it and only moves its own request between the thread and the event loop,
 * both bounded by `inflateBody`'s limit); any other body is its length.
 */
export function inflatedSizeHint(wire: WireBody): number {
  const { bytes } = wire;
  if (!wire.gzip || bytes.byteLength < 18) return bytes.byteLength; // 10-byte header, 8-byte trailer
  const n = bytes.byteLength;
  const isize = (bytes[n - 4] | (bytes[n - 3] << 8) | (bytes[n - 2] << 16) | (bytes[n - 1] << 24)) >>> 0;
  return Math.max(n, isize);
}

/**
 * A wire body's bytes, a gzip one inflated under the same bound `maxBytes` (a small gzip bomb is
 * refused as it grows: 413; 400 when it is not gzip). Runs on the event loop or on an offload
 * thread (offload/): web-standard streams only.
 */
export async function inflateBody(wire: WireBody, maxBytes: number): Promise<Uint8Array> {
  if (!wire.gzip || wire.bytes.byteLength === 0) return wire.bytes;
  try {
    return await readCapped(
      new Blob([wire.bytes as BlobPart]).stream().pipeThrough(new DecompressionStream("gzip")),
      maxBytes,
    );
  } catch (err) {
    if (err instanceof HttpError) throw err;
    throw badRequest("body is not valid gzip");
  }
}

/**
 * The request body as bytes (readWireBody, then inflateBody). `beforeInflate` runs once the wire
 * bytes are in, before a gzip body is inflated (the many-item doors confirm their admission
 * there: RateReservation).
 */
export async function readBodyBytes(
  request: Request,
  maxBytes: number,
  beforeInflate?: () => Promise<void>,
): Promise<Uint8Array> {
  const wire = await readWireBody(request, maxBytes);
  if (wire.gzip && wire.bytes.byteLength > 0) await beforeInflate?.();
  return inflateBody(wire, maxBytes);
}

/** The body as UTF-8 text (gzip inflated), within `maxBytes`; 400 when empty or not UTF-8. */
export async function readBodyText(
  request: Request,
  maxBytes: number,
  beforeInflate?: () => Promise<void>,
): Promise<string> {
  return bodyText(await readBodyBytes(request, maxBytes, beforeInflate));
}

/** A body's bytes as UTF-8 text; 400 when empty or not UTF-8. */
export function bodyText(bytes: Uint8Array): string {
  if (bytes.byteLength === 0) throw badRequest("body is empty: expected a JSON object");
  try {
    return new TextDecoder("utf-8", { fatal: true, ignoreBOM: false }).decode(bytes);
  } catch {
    throw badRequest("body is not valid UTF-8");
  }
}

/** The body stream, at most `maxBytes` of it (413 past that, the stream cancelled). */
export function readCapped(stream: ReadableStream<Uint8Array> | null, maxBytes: number): Promise<Uint8Array> {
  return readCappedStream(stream, maxBytes, () => tooLarge(maxBytes));
}

/**
 * JSON.parse plus the checks it does not do: duplicate keys (JSON.parse silently keeps the last
 * one, so two readers of the same body could disagree) and what Postgres jsonb cannot store or
 * we will not walk (inspectJson: depth, key count, NUL, unpaired surrogates, numbers beyond a
 * double). Every failure names the field.
 */
export function parseJsonStrict(text: string): unknown {
  const value = parseJsonObject(text);
  const inspection = inspectJson(value);
  if (!inspection.ok) throw badRequest(inspection.error);
  assertNoDuplicateKeys(text, inspection.keys);
  return value;
}

/** JSON.parse of a body that must be an object; 400 otherwise. */
export function parseJsonObject(text: string): Record<string, unknown> {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw badRequest("body is not valid JSON");
  }
  if (value === null || typeof value !== "object" || Array.isArray(value))
    throw badRequest("body must be a JSON object");
  return value as Record<string, unknown>;
}

/**
 * 400 naming the first repeated key. `parsedKeys`: the object keys JSON.parse kept, when known
 * (the cheap check: a mismatch with the key tokens in the text means a duplicate); null: unknown,
 * so the text is searched for one. `keyTokens`: the text's key tokens when already counted
 * (batch-body.ts counts them in its scan), else counted here.
 */
export function assertNoDuplicateKeys(text: string, parsedKeys: number | null, keyTokens: number | null = null): void {
  if (parsedKeys !== null && (keyTokens ?? countKeyTokens(text)) === parsedKeys) return;
  const duplicate = findDuplicateKey(text);
  if (duplicate !== null) throw badRequest(`invalid ${describeField(duplicate)}: duplicate key`);
}

/**
 * Object keys in the text: string tokens followed by a colon. Run only on text JSON.parse accepted,
 * so outside strings there are no quotes and the next quote always opens a string. indexOf-based:
 * twice as fast as a regex on the hot path.
 */
function countKeyTokens(text: string): number {
  let n = 0;
  let at = 0;
  for (;;) {
    const open = text.indexOf('"', at);
    if (open < 0) return n;
    let close = text.indexOf('"', open + 1);
    // A quote preceded by an odd number of backslashes is escaped: keep looking.
    for (;;) {
      let b = close - 1;
      while (text.charCodeAt(b) === 92) b--;
      if ((close - 1 - b) % 2 === 0) break;
      close = text.indexOf('"', close + 1);
    }
    let k = close + 1;
    let c = text.charCodeAt(k);
    while (c === 32 || c === 10 || c === 13 || c === 9) c = text.charCodeAt(++k);
    if (c === 58) n++;
    at = k;
  }
}

const TOKEN = /"[^"\\]*(?:\\.[^"\\]*)*"|[{}[\]:,]|[^\s{}[\]:,"]+/g;

/** Slow path: the JSON pointer of the first repeated key, or null when there is none. */
function findDuplicateKey(text: string): string | null {
  type Frame = { keys: Set<string> | null; path: string; index: number; pendingKey: string | null };
  const stack: Frame[] = [];
  let lastString: string | null = null;
  const childPath = (f: Frame) => (f.keys ? `${f.path}/${escapePointer(f.pendingKey ?? "")}` : `${f.path}/${f.index}`);
  TOKEN.lastIndex = 0;
  for (let m = TOKEN.exec(text); m; m = TOKEN.exec(text)) {
    const tok = m[0];
    const top = stack[stack.length - 1];
    if (tok === "{" || tok === "[") {
      const path = top ? childPath(top) : "";
      stack.push({ keys: tok === "{" ? new Set() : null, path, index: 0, pendingKey: null });
    } else if (tok === "}" || tok === "]") {
      stack.pop();
    } else if (tok === ":") {
      const key = JSON.parse(lastString!) as string;
      if (top.keys!.has(key)) return `${top.path}/${escapePointer(key)}`;
      top.keys!.add(key);
      top.pendingKey = key;
    } else if (tok === ",") {
      if (!top.keys) top.index++;
    } else if (tok.startsWith('"')) {
      lastString = tok;
    }
  }
  return null;
}
