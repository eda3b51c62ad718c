import * as grpc from "@grpc/grpc-js";
import { bytesMethod, TRACE_EXPORT } from "../../apps/ingest/src/otlp/grpc/server";
import { batchBody, batchText, fresh, HEX, otlpBodies, otlpTemplate, trace } from "./bodies";
import { type RunQueueWait, runQueueWait, waitSince } from "../lib/proc";

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
  /** How long this client's threads waited for a core while it sent, and how many times they ran. */
  wait: RunQueueWait;
  /** Per request: [epoch ms sent, ms]. */
  timeline: Array<[number, number]>;
}

export interface FloodResult {
  requests: number;
  ok: number;
  refused: number;
  other: number;
  /** Items (spans, batch items, scores) in requests answered 200. */
  items: number;
  /** CPU seconds the flood used (user + system), from its start to its end. */
  cpu: number;
  /** CPU seconds spent building the bodies before the start. */
  prepCpu?: number;
  /** How late the flood started after the agreed start (ms: building the bodies took longer). */
  startLate?: number;
  /** Bodies built during the flood (batch: the prebuilt spares ran out). */
  built?: number;
  /** Admitted requests: [epoch ms sent, epoch ms answered]. */
  admitted?: Array<[number, number]>;
}

/** V: `rate` single traces per second, each its own session, for `seconds`. */
export async function runSender(cfg: {
  url: string;
  key: string;
  services: string[];
  rate: number;
  seconds: number;
  prefix: string;
  /** Epoch ms to start at (the flooder's too); now if absent. */
  startAt?: number;
}): Promise<SenderResult> {
  const out: SenderResult = {
    latencies: [],
    sentAt: {},
    non200: 0,
    cpu: 0,
    wait: { seconds: 0, runs: 0 },
    timeline: [],
  };
  await untilStart(cfg.startAt);
  const wait0 = runQueueWait(process.pid);
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
          out.timeline.push([sentAt, performance.now() - t0]);
          if (res.status === 200) out.sentAt[session] = sentAt;
          else out.non200++;
        })
        .catch(() => void out.non200++),
    );
  }
  await Promise.all(inFlight);
  out.cpu = cpuSeconds();
  out.wait = waitSince(wait0, runQueueWait(process.pid));
  return out;
}

/** CPU seconds (user + system) of this process so far. */
function cpuSeconds(): number {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1e6;
}

/** An OTLP/gRPC TraceService client whose messages are bytes (the door decodes them itself). */
const GrpcClient = grpc.makeGenericClientConstructor(
  { Export: bytesMethod(TRACE_EXPORT) } as unknown as grpc.ServiceDefinition,
  "TraceService",
);

export interface FloodConfig {
  base: string;
  /** host:port of the OTLP/gRPC listener (door `grpc`). */
  grpc: string;
  door: "otlp" | "grpc" | "batch" | "scores";
  key: string;
  seconds: number;
  connections: number;
  spans: number;
  /** Epoch ms to start at (bodies are built before it); now if absent. */
  startAt?: number;
  /**
   * Polite: requests paced so that their items come at this rate (the credential's limit), the same
   * request shapes as the flood, no refusal expected. Absent: the flood (each connection sends
   * again as soon as it is answered, ignoring Retry-After).
   */
  itemsPerSecond?: number;
}

/** Waits for the next request's slot when `cfg.itemsPerSecond` paces the stage (shared by the connections). */
function pacer(cfg: FloodConfig, itemsPerRequest: number): () => Promise<void> {
  if (!cfg.itemsPerSecond) return async () => {};
  const interval = (1000 * itemsPerRequest) / cfg.itemsPerSecond;
  let next = Number.NaN;
  return async () => {
    if (Number.isNaN(next)) next = performance.now();
    const due = next;
    next += interval;
    const wait = due - performance.now();
    if (wait > 0) await Bun.sleep(wait);
  };
}

/** Waits for `startAt` (epoch ms); returns how late it is (ms, 0 if on time). */
async function untilStart(startAt: number | undefined): Promise<number> {
  if (startAt === undefined) return 0;
  const wait = startAt - Date.now();
  if (wait > 0) await Bun.sleep(wait);
  return Math.max(0, -wait);
}

/**
 * The flood's CPU split: `prepCpu` builds the bodies before the start; `cpu` is the flood itself
 * (from the start to the end), the figure beside the server's CPU over the same stage.
 */
function startFlood(cfg: FloodConfig) {
  const out: FloodResult = {
    requests: 0,
    ok: 0,
    refused: 0,
    other: 0,
    items: 0,
    cpu: 0,
    prepCpu: 0,
    startLate: 0,
    built: 0,
    admitted: [],
  };
  let cpu0 = 0;
  return {
    out,
    async begin() {
      out.prepCpu = cpuSeconds();
      out.startLate = await untilStart(cfg.startAt);
      cpu0 = cpuSeconds();
      return performance.now() + cfg.seconds * 1000;
    },
    end() {
      out.cpu = cpuSeconds() - cpu0;
      return out;
    },
  };
}

/** F over OTLP/gRPC: `connections` concurrent Export calls on one channel, never waiting for RetryInfo. */
async function floodGrpc(cfg: FloodConfig) {
  const flood = startFlood(cfg);
  const { out } = flood;
  const client = new GrpcClient(cfg.grpc, grpc.credentials.createInsecure(), {
    "grpc.max_send_message_length": 16 * 1024 * 1024,
  }) as unknown as grpc.Client & {
    Export: (message: Buffer, metadata: grpc.Metadata, done: (err: grpc.ServiceError | null) => void) => void;
  };
  // Distinct messages: one gets fresh ids once it was admitted (a refused one is sent again).
  const bodies = otlpBodies(cfg.spans, cfg.connections, "protobuf");
  for (const b of bodies) b.patch(fresh());
  const end = await flood.begin();
  const pace = pacer(cfg, cfg.spans);
  await Promise.all(
    Array.from({ length: cfg.connections }, async (_, c) => {
      while (performance.now() < end) {
        await pace();
        if (performance.now() >= end) break;
        out.requests++;
        const sent = Date.now();
        const metadata = new grpc.Metadata();
        metadata.set("authorization", `Bearer ${cfg.key}`);
        const code = await new Promise<number>((resolve) =>
          client.Export(bodies[c].bytes, metadata, (err: grpc.ServiceError | null) => resolve(err ? err.code : 0)),
        );
        if (code === 0) {
          out.ok++;
          out.items += cfg.spans;
          out.admitted!.push([sent, Date.now()]);
          bodies[c].patch(fresh());
        } else if (code === grpc.status.RESOURCE_EXHAUSTED) out.refused++;
        else out.other++;
      }
    }),
  );
  client.close();
  return flood.end();
}

/** Prebuilt gzipped batch bodies beyond the connections' own: what a stage admits at bench/flood's 500 items/s, and more. */
const spareBatchBodies = (seconds: number) => Math.ceil(seconds / 2) + 4;

/** F: `connections` loops hammering one door for `seconds`, never waiting for Retry-After. */
export async function runFlooder(cfg: FloodConfig): Promise<FloodResult> {
  if (cfg.door === "grpc") return floodGrpc(cfg);
  const flood = startFlood(cfg);
  const { out } = flood;
  const auth = { authorization: `Bearer ${cfg.key}` };
  // OTLP: a body per connection, fresh ids patched in per request (as building one whole did).
  const otlp = cfg.door === "otlp" ? otlpBodies(cfg.spans, cfg.connections, "json") : [];
  // Batch: distinct gzipped bodies (~15 ms each), one replaced once it was admitted, from spares
  // built ahead; built during the stage only if they run out (counted in `built`).
  const batch = cfg.door === "batch" ? Array.from({ length: cfg.connections }, () => batchBody(1000, fresh())) : [];
  const spares =
    cfg.door === "batch" ? Array.from({ length: spareBatchBodies(cfg.seconds) }, () => batchBody(1000, fresh())) : [];
  const request = (c: number): { url: string; init: RequestInit; items: number } => {
    if (cfg.door === "otlp")
      return {
        url: `${cfg.base}/v1/traces`,
        init: { headers: { ...auth, "content-type": "application/json" }, body: otlp[c].patch(fresh()) },
        items: cfg.spans,
      };
    if (cfg.door === "batch")
      return {
        url: `${cfg.base}/raw/batch`,
        init: {
          headers: { ...auth, "content-type": "application/json", "content-encoding": "gzip" },
          body: batch[c] as BodyInit,
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
  const end = await flood.begin();
  const pace = pacer(cfg, cfg.door === "otlp" ? cfg.spans : cfg.door === "batch" ? 1000 : 1);
  await Promise.all(
    Array.from({ length: cfg.connections }, async (_, c) => {
      while (performance.now() < end) {
        await pace();
        if (performance.now() >= end) break;
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
            if (cfg.door === "batch") {
              const spare = spares.pop();
              if (!spare) out.built!++;
              batch[c] = spare ?? batchBody(1000, fresh());
            }
          } else if (res.status === 429) out.refused++;
          else out.other++;
        } catch {
          out.other++;
        }
      }
    }),
  );
  return flood.end();
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
