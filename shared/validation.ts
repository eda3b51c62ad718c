import type { TSchema } from "@sinclair/typebox";
import { TypeCompiler, type TypeCheck } from "@sinclair/typebox/compiler";
import { assertOwnFormats, registerSchemaFormats } from "./schema-formats.ts";

/** `/responses/0/usage/total_tokens` -> `responses[0].usage.total_tokens` */
export function fieldName(pointer: string): string {
  const parts = pointer
    .split("/")
    .slice(1)
    .map((p) => p.replace(/~1/g, "/").replace(/~0/g, "~"));
  let out = "";
  for (const p of parts) out += /^\d+$/.test(p) ? `[${p}]` : out ? `.${p}` : p;
  return out || "body";
}

/** A compiled validator whose failures name the offending field. */
export function compileValidator<T extends TSchema>(schema: T) {
  // A schema means the same in every process: only formats shared/schema-formats.ts owns.
  assertOwnFormats(schema);
  registerSchemaFormats();
  const check: TypeCheck<T> = TypeCompiler.Compile(schema);
  return {
    check: (value: unknown) => check.Check(value),
    /** The first problem as "invalid <field>: <reason>", or null when the value is valid. */
    firstError(value: unknown): string | null {
      if (check.Check(value)) return null;
      // Prefer the deepest error: a union's inner failure says more than "expected union".
      let best: { path: string; message: string } | null = null;
      for (const e of check.Errors(value)) {
        if (!best || e.path.length > best.path.length) best = { path: e.path, message: e.message };
        if (best.path.length > 200) break;
      }
      return best ? `invalid ${fieldName(best.path)}: ${best.message.toLowerCase()}` : "invalid body";
    },
  };
}
