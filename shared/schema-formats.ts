import { FormatRegistry, type TSchema } from "@sinclair/typebox";
import { INSTANT_FORMAT, parseInstant } from "./timestamps.ts";

/**
 * Every TypeBox `format` a schema of ours may name, with its check. TypeBox keeps formats in one
 * process-wide registry that other libraries write too (Elysia registers its own `date-time`,
 * `email`, ... when it loads), so a schema naming a format it does not own here would mean one
 * thing in a process that loaded Elysia (ingest) and another in one that did not (the processor):
 * the loss of issue 21. `compileValidator` (validation.ts) refuses any schema that names a format
 * missing from this table, in every process alike, and registers these before compiling.
 */
export const SCHEMA_FORMATS: Readonly<Record<string, (value: string) => boolean>> = {
  [INSTANT_FORMAT]: (v) => parseInstant(v).ok,
};

/** Registers every format of SCHEMA_FORMATS under its own name (idempotent). */
export function registerSchemaFormats(): void {
  for (const [name, check] of Object.entries(SCHEMA_FORMATS)) {
    if (FormatRegistry.Get(name) !== check) FormatRegistry.Set(name, check);
  }
}

/** The `format` names a schema refers to anywhere inside it (objects, arrays, unions, records). */
export function formatsUsedBy(schema: TSchema): Set<string> {
  const found = new Set<string>();
  const seen = new Set<object>();
  const walk = (node: unknown): void => {
    if (!node || typeof node !== "object" || seen.has(node)) return;
    seen.add(node);
    if (Array.isArray(node)) {
      for (const item of node) walk(item);
      return;
    }
    const record = node as Record<string, unknown>;
    if (typeof record.format === "string" && (record.type === "string" || record.type === undefined))
      found.add(record.format);
    for (const value of Object.values(record)) walk(value);
  };
  walk(schema);
  return found;
}

/** Throws when a schema names a format this module does not own (see SCHEMA_FORMATS). */
export function assertOwnFormats(schema: TSchema, what = "schema"): void {
  const foreign = [...formatsUsedBy(schema)].filter((name) => !(name in SCHEMA_FORMATS));
  if (foreign.length > 0) {
    throw new Error(
      `${what} uses format(s) ${foreign.join(", ")} that shared/schema-formats.ts does not register: its meaning would depend on what else the process loaded`,
    );
  }
}

registerSchemaFormats();
