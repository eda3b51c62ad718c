import { OptionalKind, type TSchema } from "@sinclair/typebox";

/**
 * Building blocks for the OpenAPI 3.1 documents of the two hosts. Schemas come straight from the
 * TypeBox objects that validate requests: OpenAPI 3.1 speaks JSON Schema 2020-12, so a TypeBox
 * schema needs only its runtime-only keys removed.
 */

const DROP = new Set(["error", "$id"]);

/** A TypeBox schema as plain JSON Schema (symbols, `$id` and Elysia's `error` texts dropped). */
export function jsonSchema(schema: TSchema | Record<string, unknown>): Record<string, unknown> {
  const clean = (v: unknown): unknown => {
    if (Array.isArray(v)) return v.map(clean);
    if (v && typeof v === "object") {
      const out: Record<string, unknown> = {};
      for (const [k, x] of Object.entries(v)) if (!DROP.has(k) && x !== undefined) out[k] = clean(x);
      return out;
    }
    return v;
  };
  return clean(JSON.parse(JSON.stringify(schema))) as Record<string, unknown>;
}

export const isOptional = (schema: unknown) => Boolean(schema && typeof schema === "object" && OptionalKind in schema);

export const ERROR_SCHEMA = {
  type: "object",
  required: ["error"],
  properties: { error: { type: "string", description: "Human-readable message; the only field" } },
} as const;

/** `{"error": "..."}` responses for the given statuses, referencing components/schemas/Error. */
export function errorResponses(statuses: Record<number, string>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [status, description] of Object.entries(statuses)) {
    out[status] = { description, content: { "application/json": { schema: { $ref: "#/components/schemas/Error" } } } };
  }
  return out;
}

/** Statuses answered with a Retry-After header on both hosts (a rate limit, and what is unavailable for now). */
export const RETRY_AFTER_STATUSES = ["429", "503"];

/** `responses` with the Retry-After header documented on each of RETRY_AFTER_STATUSES it lists. */
export function withRetryAfter(responses: Record<string, unknown>): Record<string, unknown> {
  for (const status of RETRY_AFTER_STATUSES) {
    const r = responses[status] as Record<string, unknown> | undefined;
    if (r)
      r.headers = {
        "Retry-After": { description: "Seconds to wait before trying again", schema: { type: "integer", minimum: 0 } },
      };
  }
  return responses;
}

export const jsonContent = (schema: unknown) => ({ "application/json": { schema } });
