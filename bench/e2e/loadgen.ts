/**
 * The e2e bench's load generator, a child process of its own so its CPU is counted apart from
 * the apps: autocannon at a fixed overall rate against POST /raw/traces. Sessions look like chat
 * sessions: `rate x gapSeconds` slots, each sending a trace every `gapSeconds`; a slot's session
 * lasts `genSeconds`, then goes idle (so it matures during the run) and the slot starts a new one.
 * Slots are out of phase (slot j starts its sessions j/slots of a generation later), so sessions
 * end at a steady rate (slots / genSeconds per second) rather than all at once: lateness is then
 * measured in steady state, not as the drain of a burst. The sessions still open when the run
 * stops all end together; the bench reports them apart.
 * Every trace carries its own `trace_id`; slots are spread over `keys` (one telemetry key per
 * tenant), so a slot's sessions stay in one tenant. Prints one JSON line with the result.
 *
 *   bun run bench/e2e/loadgen.ts '<json options>'
 */
// @ts-expect-error autocannon ships no types
import autocannonUntyped from "autocannon";
import { makeTemplates } from "../lib/traces";

interface Options {
  url: string;
  keys: string[];
  rate: number;
  seconds: number;
  prefix: string;
  connections: number;
  gapSeconds: number;
  genSeconds: number;
}
const o = JSON.parse(process.argv[2]) as Options;
const templates = makeTemplates(200).map((t) =>
  t.replace('"session_id":"__SESSION__"', '"session_id":"__SESSION__","trace_id":"__TRACE__"'),
);
const slots = Math.max(1, Math.round(o.rate * o.gapSeconds));
let seq = 0;
const autocannon = autocannonUntyped as (opts: Record<string, unknown>) => Promise<any>;
const cpu0 = process.cpuUsage();
const result = await autocannon({
  url: o.url,
  connections: o.connections,
  overallRate: o.rate,
  duration: o.seconds,
  method: "POST",
  headers: { "content-type": "application/json" },
  requests: [
    {
      setupRequest: (req: Record<string, unknown>) => {
        const i = seq++;
        const slot = i % slots;
        const generation = Math.floor((i / o.rate + (slot / slots) * o.genSeconds) / o.genSeconds);
        const session = `${o.prefix}-s${slot}-g${generation}`;
        return {
          ...req,
          headers: { ...(req.headers as object), authorization: `Bearer ${o.keys[slot % o.keys.length]}` },
          body: templates[i % templates.length]
            .replace("__SESSION__", session)
            .replace("__TRACE__", `${o.prefix}-t${i}`),
        };
      },
    },
  ],
});
const cpu = process.cpuUsage(cpu0);
console.log(
  JSON.stringify({
    ok: result["2xx"],
    non2xx: result.non2xx,
    errors: result.errors,
    timeouts: result.timeouts,
    sent: seq,
    p50: result.latency.p50,
    p99: result.latency.p99,
    max: result.latency.max,
    cpuSeconds: (cpu.user + cpu.system) / 1e6,
  }),
);
process.exit(0);
