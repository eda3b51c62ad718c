/**
 * `npm run bench:otlp`: GenAI spans/s through POST /v1/traces (protobuf and OTLP/JSON, 10 model-call
 * spans per request, as a BatchSpanProcessor sends them) next to traces/s through /raw/traces, in
 * the same run against the same real apps/ingest/src/main.ts (PubAck durability) over a real
 * nats-server and Postgres, with a bare Bun.serve that only reads the body and answers 200 as the
 * floor. Every request carries fresh trace ids, so nothing is answered from the duplicate window.
 *
 *   bun run bench/otlp.ts [--duration 8] [--connections 32] [--rounds 2] [--spans 10]
 */
import { readFileSync } from "node:fs";
import { loadavg } from "node:os";
import { parseArgs } from "node:util";
// @ts-expect-error autocannon ships no types
import autocannonUntyped from "autocannon";
import { encodeRequestFromJson } from "@cellar/shared/otlp/decode";
import { freePort, waitForPort } from "../scripts/infra/ports";
import { runBench } from "./lib/harness";

if (process.argv[2] === "--bare-server") {
  const server = Bun.serve({
    port: Number(process.argv[3]),
    hostname: "127.0.0.1",
    async fetch(req) {
      await req.arrayBuffer();
      return new Response("{}", { headers: { "content-type": "application/json" } });
    },
  });
  process.on("SIGTERM", () => {
    server.stop(true);
    process.exit(0);
  });
  await new Promise(() => {});
}

const { values: args } = parseArgs({
  options: {
    duration: { type: "string", default: "8" },
    connections: { type: "string", default: "32" },
    rounds: { type: "string", default: "2" },
    spans: { type: "string", default: "10" },
  },
});
const DURATION = Number(args.duration);
const CONNECTIONS = Number(args.connections);
const ROUNDS = Number(args.rounds);
const SPANS = Number(args.spans);
const autocannon = autocannonUntyped as (opts: Record<string, unknown>) => Promise<{
  "2xx": number;
  non2xx: number;
  errors: number;
  timeouts: number;
  latency: { p50: number; p99: number };
}>;

const PLACEHOLDER_HEX = "abababababababababababababababab";
const kv = (key: string, value: string | number) => ({
  key,
  value: typeof value === "number" ? { intValue: String(value) } : { stringValue: value },
});

/** One request: SPANS model calls of a growing conversation (the shape instrumentations send). */
function otlpRequest() {
  const messages: any[] = [
    {
      role: "system",
      parts: [
        {
          type: "text",
          content: "You are Cellar Support, a friendly assistant for an online keyboard shop. Answer briefly.",
        },
      ],
    },
  ];
  const spans = [];
  for (let i = 0; i < SPANS; i++) {
    messages.push({
      role: "user",
      parts: [{ type: "text", content: `Turn ${i}: where is my order A-10${40 + i}? The page still says processing.` }],
    });
    const output = [
      {
        role: "assistant",
        parts: [{ type: "text", content: `Order A-10${40 + i} shipped with DHL and arrives in two days.` }],
        finish_reason: "stop",
      },
    ];
    const start = BigInt(Date.UTC(2025, 2, 1, 10, 0, i)) * 1_000_000n;
    spans.push({
      traceId: PLACEHOLDER_HEX,
      spanId: (i + 1).toString(16).padStart(16, "0"),
      name: "chat gpt-4o-mini",
      kind: 3,
      startTimeUnixNano: String(start),
      endTimeUnixNano: String(start + 900_000_000n),
      attributes: [
        kv("gen_ai.operation.name", "chat"),
        kv("gen_ai.provider.name", "openai"),
        kv("gen_ai.request.model", "gpt-4o-mini"),
        kv("gen_ai.response.model", "gpt-4o-mini-2024-07-18"),
        kv("gen_ai.response.id", `chatcmpl-${i}`),
        kv("gen_ai.usage.input_tokens", 400 + i * 60),
        kv("gen_ai.usage.output_tokens", 30),
        kv("gen_ai.input.messages", JSON.stringify(messages)),
        kv("gen_ai.output.messages", JSON.stringify(output)),
      ],
    });
    messages.push({ role: "assistant", parts: output[0].parts });
  }
  return {
    resourceSpans: [
      {
        resource: { attributes: [kv("service.name", "support-bot"), kv("deployment.environment.name", "bench")] },
        scopeSpans: [{ scope: { name: "bench" }, spans }],
      },
    ],
  };
}

const RAW_TRACE = JSON.stringify({
  provider: "openai",
  service_name: "support-bot",
  session_id: "__SESSION__",
  environment: "bench",
  start_time: "2025-03-01T10:00:00Z",
  end_time: "2025-03-01T10:00:01Z",
  request: {
    model: "gpt-4o-mini",
    messages: [
      { role: "system", content: "You are Cellar Support." },
      ...Array.from({ length: 12 }, (_, i) => ({
        role: i % 2 ? "assistant" : "user",
        content: `Turn ${i}: where is my order A-10${40 + i}? The page still says processing.`,
      })),
    ],
  },
  responses: [
    {
      id: "chatcmpl-1",
      object: "chat.completion",
      model: "gpt-4o-mini-2024-07-18",
      choices: [{ index: 0, message: { role: "assistant", content: "Shipped." }, finish_reason: "stop" }],
      usage: { prompt_tokens: 500, completion_tokens: 30, total_tokens: 530 },
    },
  ],
});

let seq = 0;
const freshHex = () =>
  (process.pid.toString(16).padStart(8, "0") + (++seq).toString(16).padStart(24, "0")).slice(0, 32);

function cpuSeconds(pid: number | undefined): number {
  try {
    const f = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1].split(" ");
    return (Number(f[11]) + Number(f[12])) / 100;
  } catch {
    return 0;
  }
}

async function load(
  url: string,
  contentType: string,
  headers: Record<string, string>,
  body: () => string | Buffer,
  pids: Array<number | undefined>,
) {
  const before = pids.map(cpuSeconds);
  const r = await autocannon({
    url,
    connections: CONNECTIONS,
    duration: DURATION,
    method: "POST",
    headers: { "content-type": contentType, ...headers },
    requests: [{ setupRequest: (req: Record<string, unknown>) => ({ ...req, body: body() }) }],
  });
  let cpu = 0;
  pids.forEach((pid, i) => (cpu += cpuSeconds(pid) - before[i]!));
  return {
    rps: r["2xx"] / DURATION,
    ok: r["2xx"],
    bad: r.non2xx + r.errors + r.timeouts,
    p50: r.latency.p50,
    p99: r.latency.p99,
    cpuUsPerReq: r["2xx"] ? (cpu * 1e6) / r["2xx"] : 0,
  };
}

async function main() {
  await runBench("otlp", { nats: true, poolMax: 2 }, async (bench) => {
    const nats = bench.nats!;
    const tenant = await bench.tenant();
    const barePort = await freePort();
    const bare = bench.spawnScript(["bench/otlp.ts", "--bare-server", String(barePort)]);
    const ingestApp = await bench.spawnApp("ingest", { env: { INGEST_RATE_LIMIT_PER_SECOND: "0" } });
    const { child: ingest, port: ingestPort } = ingestApp;
    await waitForPort(barePort);

    const json = otlpRequest();
    const jsonText = JSON.stringify(json);
    const proto = Buffer.from(encodeRequestFromJson("traces", json));
    const placeholder = Buffer.from(PLACEHOLDER_HEX, "hex");
    const offsets: number[] = [];
    for (let at = proto.indexOf(placeholder); at >= 0; at = proto.indexOf(placeholder, at + 1)) offsets.push(at);
    const protoBody = () => {
      const b = Buffer.from(proto);
      const id = Buffer.from(freshHex(), "hex");
      for (const o of offsets) id.copy(b, o);
      return b;
    };
    const jsonBody = () => jsonText.replaceAll(PLACEHOLDER_HEX, freshHex());
    const rawBody = () => RAW_TRACE.replace("__SESSION__", `bench-${freshHex()}`);
    console.log(
      `bodies: /v1/traces ${SPANS} spans per request, protobuf ${proto.length} bytes, JSON ${jsonText.length} bytes; /raw/traces ${RAW_TRACE.length} bytes; ${CONNECTIONS} connections, ${ROUNDS} rounds of ${DURATION} s`,
    );

    const auth = { authorization: `Bearer ${tenant.telemetryKey}` };
    const targets = [
      {
        name: "bare Bun.serve, protobuf body (floor)",
        unit: SPANS,
        run: () => load(`http://127.0.0.1:${barePort}/v1/traces`, "application/x-protobuf", {}, protoBody, [bare.pid]),
      },
      {
        name: "/v1/traces protobuf",
        unit: SPANS,
        run: () =>
          load(`http://127.0.0.1:${ingestPort}/v1/traces`, "application/x-protobuf", auth, protoBody, [
            ingest.pid,
            nats.process.pid,
          ]),
      },
      {
        name: "/v1/traces OTLP/JSON",
        unit: SPANS,
        run: () =>
          load(`http://127.0.0.1:${ingestPort}/v1/traces`, "application/json", auth, jsonBody, [
            ingest.pid,
            nats.process.pid,
          ]),
      },
      {
        name: "/raw/traces",
        unit: 1,
        run: () =>
          load(`http://127.0.0.1:${ingestPort}/raw/traces`, "application/json", auth, rawBody, [
            ingest.pid,
            nats.process.pid,
          ]),
      },
    ];
    const results: Array<Array<Awaited<ReturnType<typeof load>>>> = targets.map(() => []);
    for (let r = 0; r < ROUNDS; r++) {
      for (let i = 0; i < targets.length; i++) {
        const f = await targets[i].run();
        results[i].push(f);
        console.log(
          `round ${r + 1}: ${targets[i].name}: ${Math.round(f.rps)} req/s = ${Math.round(f.rps * targets[i].unit)} ${targets[i].unit > 1 ? "spans" : "traces"}/s, p50 ${f.p50} ms, p99 ${f.p99} ms, server CPU ${Math.round(f.cpuUsPerReq / targets[i].unit)} us per ${targets[i].unit > 1 ? "span" : "trace"}, non-2xx/errors ${f.bad}, load avg ${loadavg()[0].toFixed(1)}`,
        );
      }
    }
    // Median (the upper one for an even count).
    const med = (xs: number[]) => [...xs].sort((a, b) => a - b)[xs.length >> 1];
    console.log(
      "\n| target | requests/s | spans or traces/s | p50 ms | p99 ms | server CPU us per span/trace |\n|---|---|---|---|---|---|",
    );
    targets.forEach((t, i) => {
      const rs = results[i];
      console.log(
        `| ${t.name} | ${Math.round(med(rs.map((f) => f.rps)))} | ${Math.round(med(rs.map((f) => f.rps)) * t.unit)} ${t.unit > 1 ? "spans" : "traces"} | ${med(rs.map((f) => f.p50))} | ${med(rs.map((f) => f.p99))} | ${Math.round(med(rs.map((f) => f.cpuUsPerReq)) / t.unit)} |`,
      );
    });
    const ratio = (i: number) => med(results[i].map((f, r) => f.rps / results[0][r].rps));
    console.log(
      `\n/v1/traces protobuf requests / floor: ${(100 * ratio(1)).toFixed(0)}%; JSON: ${(100 * ratio(2)).toFixed(0)}%; spans/s via protobuf per /raw/traces trace/s: ${((med(results[1].map((f) => f.rps)) * SPANS) / med(results[3].map((f) => f.rps))).toFixed(2)}x`,
    );
  });
}

await main();
