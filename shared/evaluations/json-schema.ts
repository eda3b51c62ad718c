import { compilePattern, type SafePattern } from "./safe-pattern.ts";
/**
 * A subset of JSON Schema for the `json_schema` check (docs/evaluations.md): `type` (one or a
 * list; `integer` included), `enum`, `const`, `properties`, `required`, `additionalProperties`
 * (boolean or a schema), `items`, `minItems`, `maxItems`, `minLength`, `maxLength`, `pattern`,
 * `minimum`, `maximum`, `anyOf`. Other keywords are ignored. Pure; returns the first problem as
 * "<path>: <what>", or null. Bounded: at most 10,000 nodes are visited.
 */
export function jsonSchemaProblem(schema: unknown, value: unknown): string | null {
  const budget = { left: 10_000 };
  return check(schema, value, "$", budget);
}

type Schema = Record<string, unknown>;

const typeOf = (v: unknown): string =>
  v === null ? "null" : Array.isArray(v) ? "array" : typeof v === "number" ? "number" : typeof v;

function matchesType(t: string, v: unknown): boolean {
  if (t === "integer") return typeof v === "number" && Number.isInteger(v);
  return typeOf(v) === t;
}

function check(schema: unknown, v: unknown, path: string, budget: { left: number }): string | null {
  if (--budget.left < 0) return `${path}: the schema is too large to check`;
  if (schema === true || schema === undefined) return null;
  if (schema === false) return `${path}: not allowed`;
  if (!schema || typeof schema !== "object") return null;
  const s = schema as Schema;
  if (s.type !== undefined) {
    const types = Array.isArray(s.type) ? (s.type as string[]) : [s.type as string];
    if (!types.some((t) => matchesType(t, v))) return `${path}: expected ${types.join(" or ")}, got ${typeOf(v)}`;
  }
  if (Array.isArray(s.enum) && !s.enum.some((e) => JSON.stringify(e) === JSON.stringify(v)))
    return `${path}: not one of the allowed values`;
  if ("const" in s && JSON.stringify(s.const) !== JSON.stringify(v)) return `${path}: not the required value`;
  if (Array.isArray(s.anyOf) && !s.anyOf.some((sub) => check(sub, v, path, budget) === null))
    return `${path}: matches none of anyOf`;
  if (typeof v === "string") {
    if (typeof s.minLength === "number" && [...v].length < s.minLength) return `${path}: shorter than ${s.minLength}`;
    if (typeof s.maxLength === "number" && [...v].length > s.maxLength) return `${path}: longer than ${s.maxLength}`;
    if (typeof s.pattern === "string") {
      let re: SafePattern;
      try {
        re = compilePattern(s.pattern, "u");
      } catch {
        return `${path}: the schema's pattern is not a valid expression`;
      }
      if (!re.test(v)) return `${path}: does not match ${s.pattern}`;
    }
  }
  if (typeof v === "number") {
    if (typeof s.minimum === "number" && v < s.minimum) return `${path}: below ${s.minimum}`;
    if (typeof s.maximum === "number" && v > s.maximum) return `${path}: above ${s.maximum}`;
  }
  if (Array.isArray(v)) {
    if (typeof s.minItems === "number" && v.length < s.minItems) return `${path}: fewer than ${s.minItems} items`;
    if (typeof s.maxItems === "number" && v.length > s.maxItems) return `${path}: more than ${s.maxItems} items`;
    if (s.items !== undefined)
      for (let i = 0; i < v.length; i++) {
        const p = check(s.items, v[i], `${path}[${i}]`, budget);
        if (p) return p;
      }
  }
  if (typeOf(v) === "object") {
    const o = v as Record<string, unknown>;
    const props = (s.properties ?? {}) as Record<string, unknown>;
    if (Array.isArray(s.required))
      for (const k of s.required as string[]) if (!Object.hasOwn(o, k)) return `${path}.${k}: required`;
    for (const [k, val] of Object.entries(o)) {
      if (Object.hasOwn(props, k)) {
        const p = check(props[k], val, `${path}.${k}`, budget);
        if (p) return p;
      } else if (s.additionalProperties !== undefined) {
        const p = check(s.additionalProperties, val, `${path}.${k}`, budget);
        if (p) return s.additionalProperties === false ? `${path}.${k}: not allowed` : p;
      }
    }
  }
  return null;
}
