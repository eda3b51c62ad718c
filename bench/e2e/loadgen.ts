/**
 * The e2e bench's load generator, a child process of its own so its CPU is counted apart from
 * the apps: autocannon at a fixed overall rate against POST /raw/traces. Sessions look like chat
 * sessions: a new generation of sessions every `genSeconds`, each getting a trace every
 * `gapSeconds` while its generation lasts, then going idle (so they mature during the run).
 * Every trace carries its own `trace_id`. Prints one JSON line with the result.
 *
 *   bun run bench/e2e/loadgen.ts '<json options>'
 */
// @ts-expect-error autocannon ships no types
import autocannonUntyped from "autocannon";
import { makeTemplates } from "../lib/traces";

interface Options { url: string; key: string; rate: number; seconds: number; prefix: string; connections: number; gapSeconds: number; genSeconds: number }
const o = JSON.parse(process.argv[2]) as Options;
const templates = makeTemplates(200).map((t) => t.replace('"session_id":"__SESSION__"', '"session_id":"__SESSION__","trace_id":"__TRACE__"'));
const slots = Math.max(1, Math.round(o.rate * o.gapSeconds));
const perGen = Math.max(1, Math.round(o.rate * o.genSeconds));
let seq = 0;
const autocannon = autocannonUntyped as (opts: Record<string, unknown>) => Promise<any>;
const cpu0 = process.cpuUsage();
const result = await autocannon({
  url: o.url,
  connections: o.connections,
  overallRate: o.rate,
  duration: o.seconds,
  method: "POST",
  headers: { "content-type": "application/json", authorization: `Bearer ${o.key}` },
  requests: [{
    setupRequest: (req: Record<string, unknown>) => {
      const i = seq++;
      const session = `${o.prefix}-g${Math.floor(i / perGen)}-${i % slots}`;
      return { ...req, body: templates[i % templates.length].replace("__SESSION__", session).replace("__TRACE__", `${o.prefix}-t${i}`) };
    },
  }],
});
const cpu = process.cpuUsage(cpu0);
console.log(JSON.stringify({
  ok: result["2xx"], non2xx: result.non2xx, errors: result.errors, timeouts: result.timeouts, sent: seq,
  p50: result.latency.p50, p99: result.latency.p99, max: result.latency.max, cpuSeconds: (cpu.user + cpu.system) / 1e6,
}));
process.exit(0);
