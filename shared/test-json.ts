/**
 * For tests of the JSON parsed in steps (shared/json-steps.ts and its callers): JSON text written
 * with random blanks and escaped keys, and random edits of it, from a seed fast-check supplies.
 */
/** A small deterministic generator for formatting and edits (fast-check supplies the seed). */
export function random(seed: number) {
  let s = seed >>> 0 || 1;
  return (n: number) => {
    s ^= s << 13;
    s ^= s >>> 17;
    s ^= s << 5;
    return (s >>> 0) % n;
  };
}

const BLANKS = ["", "", "", " ", "\n", "\t", "\r\n  "];

/** JSON text with random blanks and some keys written with escapes ("it\u0065ms"). */
export function render(value: unknown, pick: (n: number) => number): string {
  const blank = () => BLANKS[pick(BLANKS.length)];
  const key = (k: string) =>
    // Only a first character JSON writes as itself (not `\\`, `"`, a control or a surrogate).
    pick(6) === 0 && k.length > 0 && k.charCodeAt(0) < 0xd800 && JSON.stringify(k[0]).length === 3
      ? `"\\u${k.charCodeAt(0).toString(16).padStart(4, "0")}${JSON.stringify(k).slice(2)}`
      : JSON.stringify(k);
  if (Array.isArray(value))
    return `[${blank()}${value.map((v) => `${render(v, pick)}${blank()}`).join(`,${blank()}`)}]`;
  if (value !== null && typeof value === "object")
    return `{${blank()}${Object.entries(value)
      .map(([k, v]) => `${key(k)}${blank()}:${blank()}${render(v, pick)}${blank()}`)
      .join(`,${blank()}`)}}`;
  return JSON.stringify(value) ?? "null";
}

const EDIT_CHARS = ['"', "\\", "{", "}", "[", "]", ",", ":", " ", "1", "a", "\n"];

/**
 * One to three edits: a character (or one of `words`, e.g. a key the parser looks for) inserted,
 * a character deleted, a span deleted or repeated elsewhere.
 */
export function mutate(text: string, pick: (n: number) => number, words: string[] = []): string {
  const inserts = [...EDIT_CHARS, ...words];
  let out = text;
  for (let n = 1 + pick(3); n > 0 && out.length > 0; n--) {
    const at = pick(out.length + 1);
    const kind = pick(4);
    if (kind === 0) out = out.slice(0, at) + inserts[pick(inserts.length)] + out.slice(at);
    else if (kind === 1) out = out.slice(0, at) + out.slice(at + 1);
    else if (kind === 2) out = out.slice(0, at) + out.slice(at + 1 + pick(8));
    else {
      const from = pick(out.length);
      const span = out.slice(from, from + 1 + pick(40));
      out = out.slice(0, at) + span + out.slice(at);
    }
  }
  return out;
}

/** Runs `run` with JSON.parse watched: the longest text it was given in one call meanwhile. */
export async function largestParse<T>(run: () => T | Promise<T>): Promise<{ result: T; largest: number }> {
  let largest = 0;
  const parse = JSON.parse;
  JSON.parse = ((piece: string, reviver?: Parameters<typeof JSON.parse>[1]) => {
    largest = Math.max(largest, piece.length);
    return parse(piece, reviver);
  }) as typeof JSON.parse;
  try {
    const result = await run();
    return { result, largest };
  } finally {
    JSON.parse = parse;
  }
}
