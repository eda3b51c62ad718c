import { encodeRequestFromJson } from "@cellar/shared/otlp/decode";
import { makeTemplates } from "../lib/traces";

/**
 * The bodies bench/flood's clients send. The flooder's bodies are built before its stage and made
 * distinct per request by patching fresh ids into them in place (a few copies of 16-32 bytes), so
 * the flooding client spends its CPU on sending, not on building 0.5 MB strings: the stage then
 * measures the server, not the harness sharing its cores.
 */

/** Realistic chat traces of 2-6 KB (bench/lib/traces.ts); the smallest one for batch items. */
const TEMPLATES = makeTemplates(12);
const SMALLEST = TEMPLATES.reduce((a, b) => (b.length < a.length ? b : a));
const withIds = (template: string, service: string, session: string) =>
  template
    .replace('"service_name":"support-bot"', `"service_name":${JSON.stringify(service)}`)
    .replace("__SESSION__", session);
export const trace = (service: string, session: string, n: number) =>
  withIds(TEMPLATES[n % TEMPLATES.length], service, session);
/** The smallest template, made distinct by its response id (a message id hashes the body). */
const smallTrace = (service: string, session: string, unique: string) =>
  withIds(SMALLEST, service, session).replace('"id":"chatcmpl-bench', `"id":"chatcmpl-${unique}-`);

/** The id slot of the templates below: every trace id and conversation id is this, replaced per body. */
export const HEX = "abababababababababababababababab";
const kv = (key: string, value: string | number) => ({
  key,
  value: typeof value === "number" ? { intValue: String(value) } : { stringValue: value },
});

/** An OTLP/JSON export of `spans` model-call spans; HEX is replaced by a fresh trace id per request. */
export function otlpTemplate(spans: number): string {
  const start = BigInt(Date.now() - 5_000) * 1_000_000n;
  return JSON.stringify({
    resourceSpans: [
      {
        resource: { attributes: [kv("service.name", "flood-svc")] },
        scopeSpans: [
          {
            scope: { name: "flood" },
            spans: Array.from({ length: spans }, (_, i) => ({
              traceId: HEX,
              spanId: (i + 1).toString(16).padStart(16, "0"),
              name: "chat gpt-4o-mini",
              kind: 3,
              startTimeUnixNano: String(start + BigInt(i) * 1_000_000n),
              endTimeUnixNano: String(start + BigInt(i) * 1_000_000n + 900_000_000n),
              attributes: [
                kv("gen_ai.operation.name", "chat"),
                kv("gen_ai.provider.name", "openai"),
                kv("gen_ai.request.model", "gpt-4o-mini"),
                kv("gen_ai.conversation.id", `${HEX}-${i % 20}`),
                kv("gen_ai.usage.input_tokens", 400 + i),
                kv("gen_ai.usage.output_tokens", 30),
                kv(
                  "gen_ai.input.messages",
                  JSON.stringify([
                    {
                      role: "user",
                      parts: [{ type: "text", content: `Turn ${i}: where is my order A-10${i % 100}?` }],
                    },
                  ]),
                ),
                kv(
                  "gen_ai.output.messages",
                  JSON.stringify([
                    { role: "assistant", parts: [{ type: "text", content: "Shipped." }], finish_reason: "stop" },
                  ]),
                ),
              ],
            })),
          },
        ],
      },
    ],
  });
}

let seq = 0;
/** A 32-hex-digit id unique to this process's bodies (its pid, then a counter). */
export const fresh = () =>
  (process.pid.toString(16).padStart(8, "0") + (++seq).toString(16).padStart(24, "0")).slice(0, 32);

/** A protobuf OTLP export of the template with its ids replaced by `id`. */
export const otlpProtobuf = (template: string, id: string) =>
  Buffer.from(encodeRequestFromJson("traces", JSON.parse(template.replaceAll(HEX, id))));

interface Slot {
  /** The bytes of HEX as the body holds them. */
  marker: Buffer;
  /** The bytes of an id in the same form (same length as marker). */
  encode: (id: string) => Buffer;
}
const ASCII: Slot = { marker: Buffer.from(HEX, "latin1"), encode: (id) => Buffer.from(id, "latin1") };
const BINARY: Slot = { marker: Buffer.from(HEX, "hex"), encode: (id) => Buffer.from(id, "hex") };

/**
 * One body whose id slots are overwritten in place by `patch(id)`: OTLP/JSON (the ids as text) or
 * protobuf (trace ids as 16 bytes, the conversation ids as text; the same lengths, so the message
 * stays valid). `reference(id)` builds the same body the slow way; the first patch is checked
 * against it, so a slot the search missed fails the bench instead of sending repeated ids.
 */
export function patchableBody(template: Buffer, slots: Slot[], reference: (id: string) => Buffer) {
  const bytes = Buffer.from(template);
  const found = slots.map((s) => {
    const at: number[] = [];
    for (let i = bytes.indexOf(s.marker); i >= 0; i = bytes.indexOf(s.marker, i + s.marker.length)) at.push(i);
    return { ...s, at };
  });
  const patch = (id: string) => {
    for (const s of found) {
      const value = s.encode(id);
      for (const i of s.at) bytes.set(value, i);
    }
    return bytes;
  };
  const check = fresh();
  if (!patch(check).equals(reference(check))) throw new Error("patched flood body differs from the one built whole");
  return { bytes, patch };
}

/** Per connection, an OTLP/JSON (`json`) or protobuf body of `spans` spans to patch per request. */
export function otlpBodies(spans: number, connections: number, form: "json" | "protobuf") {
  const template = otlpTemplate(spans);
  const json = Buffer.from(template, "latin1");
  if (form === "json")
    return Array.from({ length: connections }, () =>
      patchableBody(json, [ASCII], (id) => Buffer.from(template.replaceAll(HEX, id), "latin1")),
    );
  const proto = otlpProtobuf(template, HEX);
  return Array.from({ length: connections }, () =>
    patchableBody(proto, [BINARY, ASCII], (id) => otlpProtobuf(template, id)),
  );
}

/** A gzipped /raw/batch body of `items` traces, distinct by `tag`. */
export function batchBody(items: number, tag: string): Uint8Array {
  return Bun.gzipSync(new TextEncoder().encode(batchText(items, tag)));
}

export function batchText(items: number, tag: string): string {
  const parts: string[] = [];
  for (let i = 0; i < items; i++)
    parts.push(`{"type":"trace","body":${smallTrace("flood-svc", `f-${tag}-${i % 50}`, `${tag}-${i}`)}}`);
  return `{"items":[${parts.join(",")}]}`;
}
