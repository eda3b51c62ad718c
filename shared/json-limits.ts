import { fieldName } from "./validation.ts";

/**
 * What a JSON value must satisfy to be stored as Postgres jsonb unchanged and handled in bounded
 * time (docs/ingestion.md, "Limits"). Applied by ingest to every body and by the processor to
 * every INGEST payload: the same function, the same limits.
 */
export const JSON_LIMITS = {
  /** Nesting levels (objects and arrays) of a body. */
  maxDepth: 64,
  /** Object keys in one body, all levels together (a 100,000-message transcript has 200,000). */
  maxKeys: 250_000,
} as const;

// ES2024; Bun has it, the repo's lib setting predates it.
type WellFormedCheck = string & { isWellFormed(): boolean };

/** Why a string cannot be stored in jsonb, or null. */
export function stringProblem(value: string): string | null {
  if (value.includes("\u0000")) return "contains a NUL character (\\u0000), which cannot be stored";
  if (!(value as WellFormedCheck).isWellFormed())
    return "contains an unpaired UTF-16 surrogate, which cannot be stored";
  return null;
}

/** A field name safe to echo: control characters escaped, long paths cut (keys are client data). */
export function describeField(pointer: string): string {
  const name = fieldName(pointer).replace(
    /[\u0000-\u001f\u007f]/g,
    (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`,
  );
  return name.length > 200 ? `${name.slice(0, 200)}...` : name;
}

export const escapePointer = (key: string) => key.replace(/~/g, "~0").replace(/\//g, "~1");

export type Inspection = { ok: true; keys: number } | { ok: false; error: string };

/**
 * Walks a parsed value once: strings and keys storable, numbers finite (JSON.parse turns 1e400
 * into Infinity, which would be stored as null), depth and key count within JSON_LIMITS. The
 * path is a stack of segments turned into a field name only on failure (this runs on every
 * body). `prefix` is the JSON pointer of `root` inside the whole message, for the field name.
 */
export function inspectJson(root: unknown, prefix = ""): Inspection {
  let keys = 0;
  const path: string[] = [];
  let error: string | null = null;
  const fail = (reason: string): false => {
    error = `invalid ${describeField(prefix + path.map((p) => `/${escapePointer(p)}`).join(""))}: ${reason}`;
    return false;
  };
  const visit = (value: unknown, depth: number): boolean => {
    if (typeof value === "string") {
      const problem = stringProblem(value);
      return problem ? fail(`value ${problem}`) : true;
    }
    if (typeof value === "number") return Number.isFinite(value) ? true : fail("number is too large to store");
    if (value === null || typeof value !== "object") return true;
    if (depth > JSON_LIMITS.maxDepth) return fail(`nesting deeper than ${JSON_LIMITS.maxDepth} levels`);
    if (Array.isArray(value)) {
      for (let i = 0; i < value.length; i++) {
        path.push(String(i));
        if (!visit(value[i], depth + 1)) return false;
        path.pop();
      }
      return true;
    }
    for (const key in value as Record<string, unknown>) {
      if (++keys > JSON_LIMITS.maxKeys) return fail(`more than ${JSON_LIMITS.maxKeys} keys in one body`);
      path.push(key);
      const problem = stringProblem(key);
      if (problem) return fail(`key ${problem}`);
      if (!visit((value as Record<string, unknown>)[key], depth + 1)) return false;
      path.pop();
    }
    return true;
  };
  return visit(root, 1) ? { ok: true, keys } : { ok: false, error: error! };
}
