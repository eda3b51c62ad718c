import * as grpc from "@grpc/grpc-js";
import { encodeRequestFromJson } from "@cellar/shared/otlp/decode";
import { bytesMethod, TRACE_EXPORT } from "../../apps/ingest/src/otlp/grpc/server";
import { makeTemplates } from "../lib/traces";

/**
 * The load generators of bench/flood.ts, each run in its own process: V's ordinary sender, F's
 * flooder (one door, ignoring Retry-After, distinct bodies), and the refusal-cost prober.
 */

export interface SenderResult {
  /** Per request, ms. */
  latencies: number[];
  /** Session id -> when its trace was sent (epoch ms), for those answered 200. */
  sentAt: Record<string, number>;
  non200: number;
  /** CPU seconds this client process used (user + system). */
  cpu: number;
  /** Per request: [epoch ms sent, ms]. */
  timeline?: Array<[number, number]>;
}

export interface FloodResult {
  requests: number;
  ok: number;
  refused: number;
  other: number;
  /** Items (spans, batch items, scores) in requests answered 200. */
  items: number;
  /** CPU seconds this client process used (user + system). */
  cpu: number;
  /** Admitted requests: [epoch ms sent, epoch ms answered]. */
  admitted?: Array<[number, number]>;
}

// Realistic chat traces of 2-6 KB (bench/lib/traces.ts); the smallest one for batch items.
const TEMPLATES = makeTemplates(12);
const SMALLEST = TEMPLATES.reduce((a, b) => (b.length < a.length ? b : a));
const withIds = (template: string, service: string, session: string) =>
  template
    .replace('"service_name":"support-bot"', `"service_name":${JSON.stringify(service)}`)
    .replace("__SESSION__", session);
const trace = (service: string, session: string, n: number) =>
  withIds(TEMPLATES[n % TEMPLATES.length], service, session);
/** The smallest template, made distinct by its response id (a message id hashes the body). */
const smallTrace = (service: string, session: string, unique: string) =>
  withIds(SMALLEST, service, session).replace('"id":"chatcmpl-bench', `"id":"chatcmpl-${unique}-`);

/** V: `rate` single traces per second, each its own session, for `seconds`. */
export async function runSender(cfg: {
  url: string;
  key: string;
  services: string[];
  rate: number;
  seconds: number;
  prefix: string;
}): Promise<SenderResult> {
  const out: SenderResult = { latencies: [], sentAt: {}, non200: 0, cpu: 0, timeline: [] };
  const start = performance.now();
  const total = Math.round(cfg.rate * cfg.seconds);
  const inFlight: Promise<void>[] = [];
  for (let n = 0; n < total; n++) {
    const due = start + (n * 1000) / cfg.rate;
    const wait = due - performance.now();
    if (wait > 0) await Bun.sleep(wait);
    const session = `${cfg.prefix}-${n}`;
    const body = trace(cfg.services[n % cfg.services.length], session, n);
    const sentAt = Date.now();
    const t0 = performance.now();
    inFlight.push(
      fetch(cfg.url, {
        method: "POST",
        headers: { authorization: `Bearer ${cfg.key}`, "content-type": "application/json" },
        body,
      })
        .then(async (res) => {
          await res.arrayBuffer();
          out.latencies.push(performance.now() - t0);
          out.timeline!.push([sentAt, performance.now() - t0]);
          if (res.status === 200) out.sentAt[session] = sentAt;
          else out.non200++;
        })
        .catch(() => void out.non200++),
    );
  }
  await Promise.all(inFlight);
  out.cpu = cpuSeconds();
  return out;
}

/** CPU seconds (user + system) of this process so far. */
function cpuSeconds(): number {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1e6;
}

const HEX = "abababababababababababababababab";
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
const fresh = () => (process.pid.toString(16).padStart(8, "0") + (++seq).toString(16).padStart(24, "0")).slice(0, 32);

/** A gzipped /raw/batch body of `items` traces, distinct by `tag`. */
function batchBody(items: number, tag: string): Uint8Array {
  return Bun.gzipSync(new TextEncoder().encode(batchText(items, tag)));
}

export function batchText(items: number, tag: string): string {
  const parts: string[] = [];
  for (let i = 0; i < items; i++)
    parts.push(`{"type":"trace","body":${smallTrace("flood-svc", `f-${tag}-${i % 50}`, `${tag}-${i}`)}}`);
  return `{"items":[${parts.join(",")}]}`;
}

/** An OTLP/gRPC TraceService client whose messages are bytes (the door decodes them itself). */
const GrpcClient = grpc.makeGenericClientConstructor(
  { Export: bytesMethod(TRACE_EXPORT) } as unknown as grpc.ServiceDefinition,
  "TraceService",
);

/** A protobuf OTLP export of `spans` spans with a fresh trace id. */
const otlpProtobuf = (template: string) =>
  Buffer.from(encodeRequestFromJson("traces", JSON.parse(template.replaceAll(HEX, fresh()))));

/** F over OTLP/gRPC: `connections` concurrent Export calls on one channel, never waiting for RetryInfo. */
async function floodGrpc(cfg: { grpc: string; key: string; seconds: number; connections: number; spans: number }) {
  const out: FloodResult = { requests: 0, ok: 0, refused: 0, other: 0, items: 0, cpu: 0, admitted: [] };
  const client = new GrpcClient(cfg.grpc, grpc.credentials.createInsecure(), {
    "grpc.max_send_message_length": 16 * 1024 * 1024,
  }) as unknown as grpc.Client & { Export: Function };
  const template = otlpTemplate(cfg.spans);
  // Distinct messages: one is replaced once it was admitted (a refused one is sent again).
  const pool = Array.from({ length: cfg.connections }, () => otlpProtobuf(template));
  const end = performance.now() + cfg.seconds * 1000;
  await Promise.all(
    Array.from({ length: cfg.connections }, async (_, c) => {
      while (performance.now() < end) {
        out.requests++;
        const sent = Date.now();
        const metadata = new grpc.Metadata();
        metadata.set("authorization", `Bearer ${cfg.key}`);
        const code = await new Promise<number>((resolve) =>
          client.Export(pool[c], metadata, (err: grpc.ServiceError | null) => resolve(err ? err.code : 0)),
        );
        if (code === 0) {
          out.ok++;
          out.items += cfg.spans;
          out.admitted!.push([sent, Date.now()]);
          pool[c] = otlpProtobuf(template);
        } else if (code === grpc.status.RESOURCE_EXHAUSTED) out.refused++;
        else out.other++;
      }
    }),
  );
  client.close();
  out.cpu = cpuSeconds();
  return out;
}

/** F: `connections` loops hammering one door for `seconds`, never waiting for Retry-After. */
export async function runFlooder(cfg: {
  base: string;
  /** host:port of the OTLP/gRPC listener (door `grpc`). */
  grpc: string;
  door: "otlp" | "grpc" | "batch" | "scores";
  key: string;
  seconds: number;
  connections: number;
  spans: number;
}): Promise<FloodResult> {
  if (cfg.door === "grpc") return floodGrpc(cfg);
  const out: FloodResult = { requests: 0, ok: 0, refused: 0, other: 0, items: 0, cpu: 0, admitted: [] };
  const auth = { authorization: `Bearer ${cfg.key}` };
  const otlp = cfg.door === "otlp" ? otlpTemplate(cfg.spans) : "";
  // Distinct bodies: a batch body is replaced once it was admitted (gzip costs ~15 ms here).
  const pool = cfg.door === "batch" ? Array.from({ length: cfg.connections }, () => batchBody(1000, fresh())) : [];
  const request = (c: number): { url: string; init: RequestInit; items: number } => {
    if (cfg.door === "otlp")
      return {
        url: `${cfg.base}/v1/traces`,
        init: { headers: { ...auth, "content-type": "application/json" }, body: otlp.replaceAll(HEX, fresh()) },
        items: cfg.spans,
      };
    if (cfg.door === "batch")
      return {
        url: `${cfg.base}/raw/batch`,
        init: {
          headers: { ...auth, "content-type": "application/json", "content-encoding": "gzip" },
          body: pool[c] as BodyInit,
        },
        items: 1000,
      };
    return {
      url: `${cfg.base}/raw/scores`,
      init: {
        headers: { ...auth, "content-type": "application/json" },
        body: JSON.stringify({ service_name: "flood-svc", session_id: `f-${fresh()}`, name: "thumbs", value: 1 }),
      },
      items: 1,
    };
  };
  const end = performance.now() + cfg.seconds * 1000;
  await Promise.all(
    Array.from({ length: cfg.connections }, async (_, c) => {
      while (performance.now() < end) {
        const r = request(c);
        out.requests++;
        const sent = Date.now();
        try {
          const res = await fetch(r.url, { method: "POST", ...r.init });
          await res.arrayBuffer();
          if (res.status === 200) {
            out.ok++;
            out.items += r.items;
            out.admitted!.push([sent, Date.now()]);
            if (cfg.door === "batch") pool[c] = batchBody(1000, fresh());
          } else if (res.status === 429) out.refused++;
          else out.other++;
        } catch {
          out.other++;
        }
      }
    }),
  );
  out.cpu = cpuSeconds();
  return out;
}

/** Refusals only: the credential's bucket is empty (a 0.001/s limit); bodies of about `kb` KB. */
export async function runRefusals(cfg: {
  base: string;
  door: "otlp" | "batch";
  key: string;
  kb: number;
  seconds: number;
  connections: number;
}) {
  // About `kb` KB of JSON: batch items of ~0.7 KB (gzipped on the wire), OTLP spans of ~1 KB.
  const text =
    cfg.door === "batch"
      ? batchText(Math.min(1000, Math.max(1, Math.round(cfg.kb / 0.7))), fresh())
      : otlpTemplate(Math.max(1, Math.round(cfg.kb / 1.0))).replaceAll(HEX, fresh());
  const body: Uint8Array | string = cfg.door === "batch" ? Bun.gzipSync(new TextEncoder().encode(text)) : text;
  const headers: Record<string, string> = {
    authorization: `Bearer ${cfg.key}`,
    "content-type": "application/json",
    ...(cfg.door === "batch" ? { "content-encoding": "gzip" } : {}),
  };
  const url = `${cfg.base}${cfg.door === "batch" ? "/raw/batch" : "/v1/traces"}`;
  // The first request takes the one token; every later one is refused.
  await (await fetch(url, { method: "POST", headers, body: body as BodyInit })).arrayBuffer();
  let refused = 0;
  let other = 0;
  const end = performance.now() + cfg.seconds * 1000;
  await Promise.all(
    Array.from({ length: cfg.connections }, async () => {
      while (performance.now() < end) {
        const res = await fetch(url, { method: "POST", headers, body: body as BodyInit });
        await res.arrayBuffer();
        if (res.status === 429) refused++;
        else other++;
      }
    }),
  );
  return {
    refused,
    other,
    seconds: cfg.seconds,
    bytes: typeof body === "string" ? body.length : body.byteLength,
    inflated: text.length,
  };
}
