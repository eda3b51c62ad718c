/**
 * Lines bench/flood/lag.ts's records from ingest up with a run's FLOOD_DETAIL timelines, per door
 * and stage, and names what each lag and each of the other tenant's slow answers waited behind:
 * - lags of 4 ms or more: how many, how long in all, how much of that the process was on a CPU
 *   (busy loop) rather than waiting for one, and how many overlap a one-piece step of ingest's
 *   own (a large JSON.parse, a large socket write) or fall inside an admitted flood request, and
 *   how many refusals were answered in each (gRPC: lag.ts `call` marks; HTTP: `req` marks of a
 *   429), and the most refusals answered within any 10 ms (paced 429s coming due together);
 * - V's answers over 10 ms: each split into arrival delay (sent -> ingest's handler), handling
 *   (handler -> response) and its publish's PubAck wait, and what overlapped it.
 *
 *   bun bench/flood/lag-report.ts <FLOOD_DETAIL prefix> <FLOOD_LAG_FILE> <door>[,<door>...]
 */
import { existsSync, readFileSync } from "node:fs";

type Detail = { timeline: Array<[number, number]>; admitted: Array<[number, number]> };
type Mark = { kind: string; at: number; ms: number; detail: string };
const [prefix, lagFile, doors] = process.argv.slice(2);
if (!prefix || !lagFile || !doors) throw new Error("usage: lag-report.ts <detail prefix> <lag file> <doors>");
const marks: Mark[] = readFileSync(lagFile, "utf8")
  .trim()
  .split("\n")
  .map((l) => {
    const [kind, at, ms, ...detail] = l.split(",");
    return { kind, at: Number(at), ms: Number(ms), detail: detail.join(",") };
  });
const of = (kind: string) => marks.filter((m) => m.kind === kind);
const overlaps = (a: { at: number; ms: number }, from: number, to: number) => a.at < to && a.at + a.ms > from;
const sum = (xs: number[]) => xs.reduce((s, x) => s + x, 0);
const median = (xs: number[]) => (xs.length ? [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] : 0);
const f0 = (x: number) => x.toFixed(0);
/** The most of these answers given within any 10 ms: a burst of them coming due together. */
const burst = (answers: Mark[]) => {
  const t = answers.map((a) => a.at + a.ms).sort((a, b) => a - b);
  let most = 0;
  for (let i = 0, j = 0; i < t.length; i++) {
    while (t[i] - t[j] > 10) j++;
    most = Math.max(most, i - j + 1);
  }
  return most;
};
/** V's door: every other HTTP path in the run is the flooder's (gRPC calls do not pass Bun.serve). */
const V_PATH = "/raw/traces";
const isV = (m: Mark) => m.detail === V_PATH || m.detail.startsWith(`${V_PATH} `);

// bench/flood.ts's stages in its order; "polite" is absent from a run with `--polite 0`.
for (const door of doors.split(","))
  for (const stage of ["alone", "polite", "flood"]) {
    const path = `${prefix}-${door}-${stage}.json`;
    if (!existsSync(path)) continue;
    const d = JSON.parse(readFileSync(path, "utf8")) as Detail;
    const t0 = Math.min(...d.timeline.map(([sent]) => sent));
    const t1 = Math.max(...d.timeline.map(([sent, ms]) => sent + ms));
    const within = (m: Mark) => m.at >= t0 && m.at <= t1;
    const lags = of("lag").filter(within);
    const oneStep = [...of("parse"), ...of("write"), ...of("decode")].filter(within);
    // An admitted flood request: answered 200 by the flooder's client (its send to its answer).
    const handlers = of("grpc").filter(within);
    // gRPC calls by the status they were answered (lag.ts `call`); a refusal's answer is its end.
    const calls = of("call").filter(within);
    const grpcRefusals = calls.filter((c) => c.detail === "8");
    // The flooder's HTTP 429s (lag.ts `req` marks carry the status since 2026-11-29).
    const httpRefusals = of("req").filter((r) => within(r) && !isV(r) && r.detail.endsWith(" 429"));
    const refusals = [...grpcRefusals, ...httpRefusals];
    const admitted = d.admitted.map(([sent, answered]) => ({ at: sent, ms: answered - sent }));
    const named = (from: number, to: number) => {
      // Refusals (gRPC or HTTP 429) answered from just before the lag to its end: a burst of them
      // (paced 429s coming due together) is work the lag may have waited behind.
      const answered = refusals.filter((c) => c.at + c.ms >= from - 1 && c.at + c.ms <= to).length;
      const also = answered ? ` + ${answered} refusals answered` : "";
      const steps = oneStep
        .filter((s) => overlaps(s, from, to))
        .map((s) => `${s.kind} ${f0(Number(s.detail) / 1024)} KB ${s.ms.toFixed(1)} ms`);
      if (steps.length) return steps.join(" + ") + also;
      // A gRPC call's handler runs from its message read (grpc-js) to its answer: before it, the read.
      if (handlers.some((h) => overlaps(h, from, to))) return `inside a gRPC handler (decode to answer)${also}`;
      if (admitted.some((a) => overlaps(a, from, to))) return `inside an admitted flood request${also}`;
      return answered ? `${answered} refusals answered` : "nothing of ingest's marked";
    };
    const busy = sum(lags.map((l) => Math.min(Number(l.detail), l.ms)));
    const byName = new Map<string, { n: number; ms: number }>();
    for (const l of lags) {
      const name = named(l.at, l.at + l.ms)
        .replace(/ \d+ KB [\d.]+ ms/g, "")
        .replace(/\d+ refusals/, "refusals");
      const e = byName.get(name) ?? { n: 0, ms: 0 };
      byName.set(name, { n: e.n + 1, ms: e.ms + l.ms });
    }
    console.log(
      `${door} ${stage}: ${lags.length} lags >= 4 ms, ${f0(sum(lags.map((l) => l.ms)))} ms in all (worst ${lags
        .map((l) => l.ms)
        .sort((a, b) => b - a)
        .slice(0, 6)
        .map(f0)
        .join(", ")}), process on a CPU for ${f0(busy)} ms of it; ` +
        [...byName].map(([name, e]) => `${e.n} (${f0(e.ms)} ms) ${name}`).join("; "),
    );
    if (calls.length)
      console.log(
        `  gRPC calls: ${calls.length} (${grpcRefusals.length} refused RESOURCE_EXHAUSTED, ${calls.filter((c) => c.detail === "0").length} OK); a refused call lived a median ${median(grpcRefusals.map((c) => c.ms)).toFixed(0)} ms (paced); the most refusals answered within any 10 ms: ${burst(grpcRefusals)}`,
      );
    if (handlers.length)
      console.log(
        `  gRPC handlers: ${handlers.length}, median ${median(handlers.map((h) => h.ms)).toFixed(1)} ms, worst ${Math.max(...handlers.map((h) => h.ms)).toFixed(1)} ms`,
      );
    const steps = oneStep.map((s) => s.ms);
    if (steps.length)
      console.log(
        `  one-piece steps: ${of("parse").filter(within).length} parses, ${of("write").filter(within).length} writes, ${of("decode").filter(within).length} protobuf decodes over 64 KB; median ${median(steps).toFixed(1)} ms, worst ${Math.max(...steps).toFixed(1)} ms`,
      );
    // V's answers over 10 ms, matched to ingest's handling of each by time.
    const reqs = of("req").filter((r) => isV(r) && within(r));
    if (httpRefusals.length)
      console.log(`  HTTP 429s: ${httpRefusals.length}, the most answered within any 10 ms: ${burst(httpRefusals)}`);
    const publishes = of("publish").filter(within);
    const slow = d.timeline.filter(([, ms]) => ms > 10);
    const parts = slow.map(([sent, ms]) => {
      const r = reqs.find((q) => q.at >= sent - 2 && q.at + q.ms <= sent + ms + 2);
      const p = r && publishes.find((q) => q.at >= r.at && q.at + q.ms <= r.at + r.ms + 1 && Number(q.detail) < 65536);
      const arrival = r ? r.at - sent : Number.NaN;
      const lagged = lags.filter((l) => overlaps(l, sent, sent + ms));
      return { sent, ms, arrival, handling: r?.ms ?? Number.NaN, puback: p?.ms ?? Number.NaN, lagged };
    });
    const fin = (xs: number[]) => xs.filter((x) => Number.isFinite(x));
    console.log(
      `  V answers > 10 ms: ${slow.length} (matched to ingest ${fin(parts.map((p) => p.arrival)).length}); median arrival delay ${f0(median(fin(parts.map((p) => p.arrival))))} ms, handling ${f0(median(fin(parts.map((p) => p.handling))))} ms (PubAck wait ${median(fin(parts.map((p) => p.puback))).toFixed(1)} ms); ${parts.filter((p) => p.lagged.length).length} overlap a lag`,
    );
    for (const p of parts.sort((a, b) => b.ms - a.ms).slice(0, 8))
      console.log(
        `    ${((p.sent - t0) / 1000).toFixed(2)} s: ${f0(p.ms)} ms = arrival ${f0(p.arrival)} + handling ${f0(p.handling)} (PubAck ${p.puback.toFixed(1)}); lags ${f0(sum(p.lagged.map((l) => l.ms)))} ms: ${p.lagged.map((l) => `${f0(l.ms)} (cpu ${l.detail}) ${named(l.at, l.at + l.ms)}`).join("; ") || "-"}`,
      );
  }
