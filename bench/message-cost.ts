/**
 * `bun run bench/message-cost.ts`: the CPU each stage of ingest and of the processor's write
 * path spends per trace, beside a floor measured in the same run on the same messages: a bare
 * JSON.parse of the body (what any JSON server does) and a bare JetStream publish, and a bare
 * JetStream consume + ack. Each stage runs alone over every message (process CPU time, user +
 * system, so the figure holds on a loaded machine better than wall time); rounds alternate and
 * the median is printed. Real nats-server and Postgres (for the key lookup of a whole request).
 *
 *   bun run bench/message-cost.ts [--messages 3000] [--rounds 3] [--only analysis,deflate]
 *     --only WORDS  only the stages whose name holds one of the comma-separated words (the floors
 *                   always run; the consume stages only when a word names them)
 */
import { readFileSync } from "node:fs";
import { parseArgs } from "node:util";
import { AckPolicy, DeliverPolicy, jetstreamManager } from "@nats-io/jetstream";
import { KeyResolver } from "@cellar/shared/auth/keys";
import { encodePayload } from "@cellar/shared/db/payload-codec";
import { createLogger } from "@cellar/shared/logger";
import { ingestCheckedHeaders, ingestStream } from "@cellar/shared/nats/catalogue";
import { consume } from "@cellar/shared/nats/consume";
import { connectNats, createTopology, ensureTopology } from "@cellar/shared/nats/topology";
import type { IngestMessage, TracePayload } from "@cellar/shared/payloads";
import { createIngestApp } from "../apps/ingest/src/app";
import { parseJsonStrict } from "../apps/ingest/src/body";
import { messageIdFor, messageText } from "../apps/ingest/src/publish";
import { validateTrace } from "../apps/ingest/src/validate";
import { analyzeTrace, SessionAnalyzer } from "../apps/processor/src/analysis/session";
import { deriveSpans, traceIdFor } from "../apps/processor/src/ingest/spans";
import { runBench } from "./lib/harness";
import { makeTemplates } from "./lib/traces";

const { values: args } = parseArgs({
  options: {
    messages: { type: "string", default: "3000" },
    rounds: { type: "string", default: "3" },
    only: { type: "string" },
  },
});
const ONLY = args.only?.split(",").filter(Boolean) ?? [];
/** A stage runs when no `--only` was given, when it is a floor, or when its name holds one of the words. */
const selected = (name: string, floor = false) => floor || ONLY.length === 0 || ONLY.some((w) => name.includes(w));
const N = Number(args.messages);
const ROUNDS = Number(args.rounds);

const cpuUs = () => {
  const u = process.cpuUsage();
  return u.user + u.system;
};
/** utime + stime of another process (Linux /proc), us. */
const procCpuUs = (pid: number | undefined) => {
  try {
    const f = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1].split(" ");
    return ((Number(f[11]) + Number(f[12])) / 100) * 1e6;
  } catch {
    return 0;
  }
};
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[xs.length >> 1];

type Stage = { name: string; floor?: boolean; run: () => Promise<void> | void; server?: boolean };

await runBench("message-cost", { nats: true, poolMax: 2 }, async (bench) => {
  const nats = bench.nats!;
  const tenant = await bench.tenant();
  const topology = createTopology();
  const nc = await connectNats(nats.url, "bench-message-cost", { noAsyncTraces: true });
  const { js } = await ensureTopology(nc, topology);
  const jsm = await jetstreamManager(nc);

  const templates = makeTemplates(200);
  let run = 0;
  /** Fresh bodies each round: nothing is dropped as a duplicate. */
  const bodies = () => {
    run++;
    return Array.from({ length: N }, (_, i) =>
      templates[i % templates.length].replace("__SESSION__", `cost-${run}-${i}`),
    );
  };
  const sizes = templates.map((t) => t.length).sort((a, b) => a - b);
  console.log(
    `${N} traces per stage, bodies ${sizes[0]}-${sizes.at(-1)} bytes (median ${sizes[sizes.length >> 1]}), ${ROUNDS} rounds, median us per trace`,
  );

  // The messages as ingest publishes them, for the processor's stages.
  const envelope = (text: string, i: number): IngestMessage => {
    const payload = validateTrace(parseJsonStrict(text)) as TracePayload;
    return {
      kind: "trace",
      tenantId: tenant.tenantId,
      serviceName: "support-bot",
      payload,
      messageId: messageIdFor({
        kind: "trace",
        tenantId: tenant.tenantId,
        serviceName: "support-bot",
        payload,
        idSource: text,
      }),
      receivedAt: new Date(Date.UTC(2026, 0, 1, 0, 0, i % 60)).toISOString(),
    };
  };
  const encoder = new TextEncoder();
  const app = createIngestApp({
    js,
    topology,
    keys: new KeyResolver(bench.database.db),
    logger: createLogger("error"),
    maxBodyBytes: 4 * 1024 * 1024,
  });
  const auth = `Bearer ${tenant.telemetryKey}`;
  const subject = `${topology.subjectPrefix}ingest.trace`;
  const inChunks = async <T>(items: T[], size: number, fn: (item: T) => Promise<unknown>) => {
    for (let i = 0; i < items.length; i += size) await Promise.all(items.slice(i, i + size).map(fn));
  };

  // Inputs of every stage, rebuilt per round.
  let texts: string[] = [];
  let parsed: unknown[] = [];
  let payloads: TracePayload[] = [];
  let messages: IngestMessage[] = [];
  let wire: Uint8Array[] = [];
  let wireText: string[] = [];
  const prepare = () => {
    texts = bodies();
    parsed = texts.map((t) => JSON.parse(t));
    messages = texts.map(envelope);
    payloads = messages.map((m) => m.payload as TracePayload);
    wireText = messages.map((m) => JSON.stringify(m));
    wire = wireText.map((t) => encoder.encode(t));
  };
  const decoder = new TextDecoder();
  const marked = ingestCheckedHeaders();
  let sink = 0;

  const consumeAll = async (durable: string, bare: boolean) => {
    if (bare) {
      await jsm.consumers.add(topology.ingestStream, {
        durable_name: durable,
        ack_policy: AckPolicy.Explicit,
        deliver_policy: DeliverPolicy.All,
      });
      const c = await js.consumers.get(topology.ingestStream, durable);
      const iter = await c.consume({ max_messages: 1000 });
      let n = 0;
      for await (const m of iter) {
        m.ack();
        if (++n >= N) break;
      }
      await jsm.consumers.delete(topology.ingestStream, durable);
      return;
    }
    let n = 0;
    let done!: () => void;
    const all = new Promise<void>((r) => (done = r));
    const loop = consume(
      ingestStream,
      { js, topology, logger: createLogger("error") },
      {
        batch: { maxBatch: 500, maxWaitMs: 20, concurrency: 2 },
        handle: async (items) => {
          n += items.length;
          if (n >= N) done();
        },
      },
    );
    await all;
    await loop.stop();
  };

  const stages: Stage[] = [
    // Ingest, one /raw/traces request.
    {
      name: "floor: JSON.parse of the body",
      floor: true,
      run: () => texts.forEach((t) => (sink += JSON.parse(t) ? 1 : 0)),
    },
    {
      name: "ingest: strict parse (parse + storability walk + duplicate keys)",
      run: () => texts.forEach((t) => parseJsonStrict(t)),
    },
    {
      name: "ingest: id source (JSON.stringify of the body)",
      run: () => parsed.forEach((p) => (sink += JSON.stringify(p).length)),
    },
    { name: "ingest: validate (timestamps, schema, rules)", run: () => parsed.forEach((p) => validateTrace(p)) },
    {
      name: "ingest: message id (sha256)",
      run: () => messages.forEach((m, i) => (sink += messageIdFor({ ...m, idSource: texts[i] }).length)),
    },
    { name: "ingest: envelope JSON.stringify", run: () => messages.forEach((m) => (sink += JSON.stringify(m).length)) },
    {
      name: "ingest: envelope with the body's text spliced in (messageText)",
      run: () => messages.forEach((m, i) => (sink += messageText(m, texts[i]).length)),
    },
    {
      name: "floor: bare JetStream publish (client + nats-server)",
      floor: true,
      server: true,
      run: () =>
        inChunks(
          wireText.map((t, i) => [t, `bare-${run}-${i}`] as const),
          200,
          ([t, id]) => js.publish(subject, t, { msgID: id }),
        ),
    },
    {
      name: "ingest: whole POST /raw/traces in-process (client + nats-server)",
      server: true,
      run: () =>
        inChunks(texts, 200, async (t) => {
          const res = await app.handle(
            new Request("http://ingest/raw/traces", {
              method: "POST",
              headers: { "content-type": "application/json", authorization: auth },
              body: t,
            }),
          );
          if (res.status !== 200) throw new Error(`ingest answered ${res.status}: ${await res.text()}`);
        }),
    },
    // The processor, one INGEST message.
    {
      name: "floor: TextDecoder + JSON.parse of the message",
      floor: true,
      run: () => wire.forEach((w) => (sink += JSON.parse(decoder.decode(w)) ? 1 : 0)),
    },
    {
      name: "processor: decode, another publisher's message (parse + every ingest rule)",
      run: () => wire.forEach((w) => ingestStream.codec.decode(subject, w, undefined)),
    },
    {
      name: "processor: decode, ingest's marked message (parse + shape check)",
      run: () => wire.forEach((w) => ingestStream.codec.decode(subject, w, marked)),
    },
    {
      name: "processor: span derivation",
      run: () =>
        messages.forEach(
          (m) => (sink += deriveSpans(traceIdFor(payloads[0], m.messageId), m.payload as TracePayload).length),
        ),
    },
    {
      name: "processor: payload deflate (encodePayload)",
      run: () => payloads.forEach((p) => (sink += encodePayload(p).length)),
    },
    {
      name: "processor: analysis (trace metrics + a one-trace session)",
      run: () =>
        payloads.forEach((p, i) => {
          const t = { traceId: `t${i}`, startTime: new Date(p.start_time), endTime: new Date(p.end_time), payload: p };
          analyzeTrace(t);
          // As maturation runs it without a summary model (no condensed transcript).
          const a = new SessionAnalyzer({ condensedTranscript: false });
          a.addTrace(t);
          sink += a.finish().items.length;
        }),
    },
  ];

  // Consume stages publish their backlog outside the measurement.
  const consumeStages = [
    { name: "floor: bare JetStream consume + ack (client + nats-server)", bare: true },
    { name: "processor: consume runtime (pull, decode, batch, ack; no-op handler)", bare: false },
  ].filter((s) => ONLY.length === 0 || ONLY.some((w) => s.name.includes(w)));
  const results = new Map<string, number[]>();
  const note = (name: string, us: number) => results.set(name, [...(results.get(name) ?? []), us]);
  for (let round = 0; round < ROUNDS; round++) {
    prepare();
    for (const s of stages) {
      if (!selected(s.name, s.floor)) continue;
      const c0 = cpuUs();
      const n0 = s.server ? procCpuUs(nats.process.pid) : 0;
      await s.run();
      const us = cpuUs() - c0 + (s.server ? procCpuUs(nats.process.pid) - n0 : 0);
      note(s.name, us / N);
    }
    for (const s of consumeStages) {
      await jsm.streams.purge(topology.ingestStream);
      // The runtime's durable consumer starts from the purge; the bare one is made fresh. Marked
      // as ingest marks them (the runtime decodes them as the processor does).
      await inChunks(wireText, 500, (t) => js.publish(subject, t, { headers: ingestCheckedHeaders() }));
      const c0 = cpuUs();
      const n0 = procCpuUs(nats.process.pid);
      await consumeAll(`bench-bare-${round}`, s.bare);
      note(s.name, (cpuUs() - c0 + procCpuUs(nats.process.pid) - n0) / N);
    }
    await jsm.streams.purge(topology.ingestStream);
  }
  const width = Math.max(...[...results.keys()].map((k) => k.length));
  for (const [name, xs] of results)
    console.log(
      `${name.padEnd(width)}  ${median(xs).toFixed(1).padStart(7)} us  (${xs.map((x) => x.toFixed(0)).join(", ")})`,
    );
  if (sink < 0) console.log(sink);
  await nc.close();
});
