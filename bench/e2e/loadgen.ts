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
 * tenant), so a slot's sessions stay in one tenant. With `batch` > 1 each request is a
 * `POST /raw/batch` of that many traces (as the SDKs send, docs/sdks.md), at rate / batch
 * requests per second, all of one key; `ok` then counts traces of 2xx answers and `requests` the
 * requests. Prints one JSON line with the result.
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
  batch?: number;
  /** Service names the traffic is spread over (each tenant's slots take them in turn); default the template's. */
  services?: string[];
}
const o = JSON.parse(process.argv[2]) as Options;
const templates = makeTemplates(200).map((t) =>
  t.replace('"session_id":"__SESSION__"', '"session_id":"__SESSION__","trace_id":"__TRACE__"'),
);
const slots = Math.max(1, Math.round(o.rate * o.gapSeconds));
const batch = Math.max(1, o.batch ?? 1);
let seq = 0;
/** The i-th trace of the run: its session (slot and generation), key and body. */
function trace(i: number) {
  const slot = i % slots;
  const generation = Math.floor((i / o.rate + (slot / slots) * o.genSeconds) / o.genSeconds);
  const session = `${o.prefix}-s${slot}-g${generation}`;
  let body = templates[i % templates.length].replace("__SESSION__", session).replace("__TRACE__", `${o.prefix}-t${i}`);
  const services = o.services ?? [];
  if (services.length > 1)
    body = body.replace(
      '"service_name":"support-bot"',
      `"service_name":"${services[Math.floor(slot / o.keys.length) % services.length]}"`,
    );
  return { key: o.keys[slot % o.keys.length], body };
}
/** Where each key's next batch starts looking: every trace belongs to one key, sent once. */
const nextOfKey = new Map<string, number>();
let requestNo = 0;
/** The next `batch` traces of the key whose turn it is (requests take the keys in turn). */
function nextBatch() {
  const key = o.keys[requestNo++ % o.keys.length];
  const bodies: string[] = [];
  let i = nextOfKey.get(key) ?? 0;
  for (; bodies.length < batch; i++) {
    const t = trace(i);
    if (t.key === key) bodies.push(t.body);
  }
  nextOfKey.set(key, i);
  return { key, body: `{"items":[${bodies.map((b) => `{"type":"trace","body":${b}}`).join(",")}]}` };
}
const autocannon = autocannonUntyped as (opts: Record<string, unknown>) => Promise<any>;
const cpu0 = process.cpuUsage();
const url = batch > 1 ? o.url.replace(/\/raw\/traces$/, "/raw/batch") : o.url;
const result = await autocannon({
  url,
  connections: o.connections,
  overallRate: o.rate / batch,
  duration: o.seconds,
  method: "POST",
  headers: { "content-type": "application/json" },
  requests: [
    {
      setupRequest: (req: Record<string, unknown>) => {
        const t = batch > 1 ? nextBatch() : trace(seq);
        seq += batch;
        return { ...req, headers: { ...(req.headers as object), authorization: `Bearer ${t.key}` }, body: t.body };
      },
    },
  ],
});
const cpu = process.cpuUsage(cpu0);
console.log(
  JSON.stringify({
    ok: result["2xx"] * batch,
    requests: result["2xx"],
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
