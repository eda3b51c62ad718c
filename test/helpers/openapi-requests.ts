/**
 * Requests generated from an OpenAPI document's own schemas (test/platform-api-openapi.test.ts):
 * the values a path names, a body each operation's schema accepts, and inputs it refuses, each
 * with the field its 400 must name.
 */

export interface Operation {
  method: string;
  path: string;
  spec: { parameters?: any[]; requestBody?: any; responses: Record<string, any> };
}

/** An input the operation's schema refuses, and the field(s) the 400 may name. */
export interface Refusal {
  why: string;
  query?: string;
  path?: string;
  body?: string;
  names: string[];
}

/** The operations of a document, in its order. */
export const operationsOf = (doc: { paths: Record<string, Record<string, Operation["spec"]>> }): Operation[] =>
  Object.entries(doc.paths).flatMap(([path, ops]) =>
    Object.entries(ops).map(([method, spec]) => ({ method: method.toUpperCase(), path, spec })),
  );

/** A value for a path parameter that names nothing in the tenant (a well-formed one). */
export function unknownValue(name: string): string {
  if (name === "seq") return "987654";
  if (/^(serviceName|name)$/.test(name)) return `no-such-${name.toLowerCase()}`;
  return crypto.randomUUID();
}

/** The operation's path with each `{name}` replaced by `value(name)`. */
export const fill = (op: Operation, value: (name: string) => string) =>
  op.path.replace(/\{([^}]+)\}/g, (_, n) => encodeURIComponent(value(n)));

/** A value of the wrong JSON type for a schema (a number where a string is wanted, and so on). */
export function wrongType(schema: any): unknown {
  const type = Array.isArray(schema?.type) ? schema.type[0] : schema?.type;
  if (type === "string") return 12345;
  if (schema?.anyOf || schema?.oneOf || schema?.enum || schema?.const !== undefined) return { not: "one of these" };
  return "not-this-type";
}

/** The operation's required query parameters (`services`: and those naming a service), each naming `service` (all but `except`). */
export const requiredQueryOf = (op: Operation, service: string, except = "", services = false) =>
  (op.spec.parameters ?? [])
    .filter((p) => p.in === "query" && (p.required || (services && /service/i.test(p.name))) && p.name !== except)
    .map((p) => `${p.name}=${encodeURIComponent(service)}`)
    .join("&");

/**
 * A body the schema accepts: its required properties (`every`: all of them), each the simplest
 * value its schema allows (a property naming a service names `service`; an id, a new uuid).
 */
export function sampleBody(schema: any, service: string, name = "", every = false): unknown {
  if (!schema) return undefined;
  if (schema.const !== undefined) return schema.const;
  if (schema.enum) return schema.enum[0];
  if (schema.default !== undefined) return schema.default;
  const choices = schema.anyOf ?? schema.oneOf;
  if (choices) return sampleBody(choices.find((c: any) => c.type !== "null") ?? choices[0], service, name, every);
  const type = Array.isArray(schema.type) ? schema.type[0] : schema.type;
  switch (type) {
    case "string":
      if (/service/i.test(name)) return service;
      if (schema.format === "date-time") return new Date().toISOString();
      if (schema.format === "email" || name === "email") return "sample@acme.test";
      if (schema.format === "uuid" || /\[0-9a-fA-F\]\{8\}/.test(schema.pattern ?? "")) return crypto.randomUUID();
      return "a".repeat(Math.max(1, schema.minLength ?? 1));
    case "integer":
    case "number":
      return Math.max(schema.minimum ?? 1, Math.min(1, schema.maximum ?? 1));
    case "boolean":
      return false;
    case "array":
      return Array.from({ length: schema.minItems ?? (every ? 1 : 0) }, () =>
        sampleBody(schema.items, service, name, every),
      );
    case "object":
      return Object.fromEntries(
        (every ? Object.keys(schema.properties ?? {}) : (schema.required ?? [])).map((p: string) => [
          p,
          sampleBody(schema.properties?.[p], service, p, every),
        ]),
      );
  }
  return null;
}

/** The operation's JSON request body schema, if the document describes one. */
export const bodySchemaOf = (op: Operation) => op.spec.requestBody?.content?.["application/json"]?.schema;

/** Inputs the operation's own schemas refuse: query, path and body, each naming what it refuses. */
export function refusedInputs(op: Operation, service: string): Refusal[] {
  const out: Refusal[] = [];
  const params = op.spec.parameters ?? [];
  const query = params.filter((p) => p.in === "query");
  const validQuery = (except: string) => requiredQueryOf(op, service, except);
  for (const p of query.filter((x) => x.required))
    out.push({ why: `query ${p.name} missing`, query: validQuery(p.name), names: [p.name] });
  for (const p of query) {
    const type = p.schema?.type;
    const bad =
      type === "integer" || type === "number"
        ? "not-a-number"
        : p.schema?.enum || p.schema?.anyOf
          ? "no-such-value"
          : p.schema?.format === "date-time"
            ? "yesterday"
            : p.schema?.maxLength
              ? "q".repeat(p.schema.maxLength + 1)
              : undefined;
    if (bad === undefined) continue;
    const rest = validQuery(p.name);
    out.push({ why: `query ${p.name} refused`, query: `${rest ? `${rest}&` : ""}${p.name}=${bad}`, names: [p.name] });
  }
  for (const p of params.filter((x) => x.in === "path")) {
    const s = p.schema ?? {};
    const bad =
      s.type === "integer" || s.format === "uuid" || s.pattern
        ? "not-valid!"
        : s.maxLength
          ? "p".repeat(s.maxLength + 1)
          : undefined;
    if (bad === undefined) continue;
    out.push({
      why: `path ${p.name} refused`,
      path: fill(op, (n) => (n === p.name ? bad : unknownValue(n))),
      query: validQuery(""),
      names: [p.name],
    });
  }
  const body = bodySchemaOf(op);
  if (body?.properties) {
    const required: string[] = body.required ?? [];
    if (required.length)
      out.push({ why: "body without its required fields", body: "{}", query: validQuery(""), names: required });
    const names = Object.keys(body.properties);
    out.push({
      why: "body fields of the wrong type",
      body: JSON.stringify(Object.fromEntries(names.map((n) => [n, wrongType(body.properties[n])]))),
      query: validQuery(""),
      names,
    });
  }
  return out;
}
