import { expect, test } from "bun:test";
import { Type } from "@sinclair/typebox";
import { assertOwnFormats } from "../shared/schema-formats.ts";
import { compileValidator } from "../shared/validation.ts";

/**
 * Issue 21: the processor, a process that never loads Elysia, dead-lettered every OTLP model call
 * from a provider other than OpenAI, because its schema named `date-time`, a format only Elysia
 * registers. These run the shared schemas in a process that has loaded nothing else.
 */
test("in a bare process, every shared schema names only formats their owner registers, and the processor decodes OTLP calls of every provider", () => {
  const probe = Bun.spawnSync([process.execPath, "run", `${import.meta.dir}/bare/schema-formats-probe.ts`], {
    stdout: "pipe",
    stderr: "pipe",
  });
  expect(probe.stderr.toString()).toBe("");
  expect(probe.exitCode).toBe(0);
  const out = JSON.parse(probe.stdout.toString().trim().split("\n").at(-1)!);
  expect(out.elysiaLoaded).toBe(false);
  expect(out.foreign).toEqual([]);
  expect(out.unregistered).toEqual([]);
  expect(out.used.OtlpTracePayload).toEqual(["cellar-instant"]);
  expect(out.decoded).toEqual({ openai: "ok", anthropic: "ok", "gcp.gemini": "ok", "aws.bedrock": "ok" });
});

test("a validator refuses, in every process alike, a schema naming a format shared/schema-formats.ts does not own", () => {
  const schema = Type.Object({ at: Type.String({ format: "date-time" }) });
  expect(() => assertOwnFormats(schema)).toThrow(/date-time/);
  expect(() => compileValidator(schema)).toThrow(/does not register/);
  expect(() => compileValidator(Type.Object({ at: Type.String({ format: "cellar-instant" }) }))).not.toThrow();
});
