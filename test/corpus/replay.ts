import { bootstrapTenant } from "@cellar/shared/admin/tenancy";
import { DETECTOR_NAMES } from "@cellar/shared/analysis/detector-config";
import type { TestStack } from "../helpers/stack";
import { buildHeldOut } from "./heldout/index";
import { type Counts, type ScoreReport, type SessionScore, summarize } from "./report";
import { buildCorpus, buildLatencyCorpus, type CorpusSession } from "./scenarios";
import type { ExpectedItem, SessionWriter } from "./session-writer";

/**
 * Replays the corpus through the real apps (ingest -> NATS -> processor -> Postgres -> platform)
 * and scores what the platform returns against the reference. Phases: the latency baseline
 * first (it must be stored before the candidates mature), then every session up to its pause,
 * then the resumed parts (each resumed session must mature a second time).
 */
/** Every declared detector is scored (shared/analysis/detector-config.ts). */
export const DETECTORS = DETECTOR_NAMES;

type Send = (path: "/raw/traces" | "/raw/events" | "/v1/traces", body: unknown) => Promise<void>;

export async function replayCorpus(
  stack: TestStack,
  opts: { log?: (line: string) => void; developmentOnly?: boolean } = {},
): Promise<ScoreReport> {
  const started = Date.now();
  const log = opts.log ?? (() => {});
  const tenant = await bootstrapTenant(stack.database.db, { name: "corpus", plan: "pro" });
  const send: Send = async (path, body) => {
    for (let attempt = 0; ; attempt++) {
      const r = await stack.ingestRequest(path, body, { authorization: `Bearer ${tenant.telemetryKey}` });
      if (r.status === 200) {
        // OTLP answers 200 with a partial success when it refused some spans: the corpus sends none it may refuse.
        if (path === "/v1/traces") {
          const answer = await r.json();
          if (answer?.partialSuccess?.rejectedSpans) throw new Error(`OTLP refused spans: ${JSON.stringify(answer)}`);
        }
        return;
      }
      if (r.status === 429 && attempt < 50) {
        await new Promise((res) => setTimeout(res, 100));
        continue;
      }
      throw new Error(`ingest answered ${r.status}: ${await r.text()}`);
    }
  };
  const latency = buildLatencyCorpus();
  const corpus = [...buildCorpus(), ...latency.candidates, ...(opts.developmentOnly ? [] : buildHeldOut())];
  const all: CorpusSession[] = [...latency.baseline, ...corpus];

  log(`latency baseline: ${latency.baseline.length} sessions`);
  await sendAll(
    send,
    latency.baseline.map((s) => ({ w: s.w, from: 0, to: s.w.traces.length, events: true })),
  );
  await waitMatured(
    stack,
    latency.baseline.map((s) => [s.w.sessionId, 1]),
  );

  log(`corpus: ${corpus.length} sessions`);
  await sendAll(
    send,
    corpus.map((s) => ({ w: s.w, from: 0, to: s.w.resumeAt ?? s.w.traces.length, events: true })),
  );
  await waitMatured(
    stack,
    corpus.map((s) => [s.w.sessionId, 1]),
  );
  const resumed = corpus.filter((s) => s.w.resumeAt !== null);
  log(`resuming ${resumed.length} sessions after their first maturation`);
  await sendAll(
    send,
    resumed.map((s) => ({ w: s.w, from: s.w.resumeAt!, to: s.w.traces.length, events: false })),
  );
  await waitMatured(
    stack,
    resumed.map((s) => [s.w.sessionId, 2]),
  );

  return score(stack, tenant.platformKey, all, started);
}

async function sendAll(send: Send, parts: Array<{ w: SessionWriter; from: number; to: number; events: boolean }>) {
  let next = 0;
  await Promise.all(
    Array.from({ length: 8 }, async () => {
      while (next < parts.length) {
        const p = parts[next++];
        for (const t of p.w.sends.slice(p.from, p.to)) await send(t.path, t.body);
        if (p.events) for (const e of p.w.events) await send("/raw/events", e);
      }
    }),
  );
}

/**
 * Waits until every session matured as often as it must. Fails when maturation is stuck (no
 * session matured for `stallMs`) or after `capMs` in all, not on a slow machine: the corpus has
 * 600+ sessions, and a loaded machine (load 30 on two cores) matures them in minutes, not seconds.
 */
async function waitMatured(stack: TestStack, want: Array<[string, number]>, stallMs = 60_000, capMs = 600_000) {
  const ids = want.map(([id]) => id);
  const need = new Map(want);
  const start = Date.now();
  let best = -1;
  let progressAt = start;
  for (;;) {
    const rows = await stack.database.sql<
      { session_id: string; maturation_count: number; through: number | null; seq: number }[]
    >`
      select s.session_id, s.maturation_count, a.through_activity_seq as through, s.activity_seq as seq
      from sessions s left join session_analyses a on a.session_pk = s.id
      where s.session_id = any(${ids}) and s.status = 'matured'`;
    const done = rows.filter(
      (r) => r.maturation_count >= need.get(r.session_id)! && Number(r.through) === Number(r.seq),
    ).length;
    if (done === want.length) return;
    const now = Date.now();
    if (done > best) {
      best = done;
      progressAt = now;
    }
    if (now - progressAt > stallMs || now - start > capMs)
      throw new Error(
        `corpus: ${done}/${want.length} sessions matured after ${now - start} ms (none in the last ${now - progressAt} ms)`,
      );
    await new Promise((r) => setTimeout(r, 200));
  }
}

async function score(
  stack: TestStack,
  token: string,
  sessions: CorpusSession[],
  started: number,
): Promise<ScoreReport> {
  // A well-behaved client: the platform limits each key (docs/platform-api.md); wait as told.
  const read = async (path: string): Promise<any> => {
    for (let attempt = 0; ; attempt++) {
      const r = await stack.platformRequest(path, { token });
      if (r.status === 429 && attempt < 20) {
        await new Promise((res) => setTimeout(res, 1000 * Number(r.headers.get("retry-after") ?? 1)));
        continue;
      }
      if (r.status !== 200) throw new Error(`GET ${path}: ${r.status} ${await r.text()}`);
      return r.json();
    }
  };
  const results: SessionScore[] = [];
  for (const { kind, w, language, set, injectionClass, source } of sessions) {
    const mine: Counts = { tp: 0, fp: 0, fn: 0 };
    const counts: Record<string, Counts> = Object.fromEntries(DETECTORS.map((d) => [d, { tp: 0, fp: 0, fn: 0 }]));
    const falsePositives: string[] = [];
    const falseNegatives: string[] = [];
    const base = `/telemetry/otel/sessions/${encodeURIComponent(w.serviceName)}/${encodeURIComponent(w.sessionId)}`;
    const items: any[] = [];
    let page: any;
    do {
      page = await read(`${base}/transcript?content=full&limit=500&offset=${items.length}`);
      items.push(...page.items);
    } while (page.pagination.nextOffset !== null);
    const actual = items.map(project);
    const expected = w.transcript().map(normalize);
    const transcriptMatch =
      JSON.stringify(actual) === JSON.stringify(expected) && new Set(items.map((i) => i.id)).size === items.length;

    const cost = await read(`${base}/cost-by-model`);
    const costMatch = costMatches(cost, w);

    const problems = (await read(`${base}/problem-analysis`)).problems as any[];
    const got = new Set(problems.map((f) => `${f.detector}|${findingKey(f)}`));
    const want = new Set(w.findings.map((f) => `${f.detector}|${f.key}`));
    for (const k of got) {
      const d = k.split("|")[0];
      if (!(d in counts)) continue;
      if (want.has(k)) {
        counts[d].tp++;
        mine.tp++;
      } else {
        counts[d].fp++;
        mine.fp++;
        falsePositives.push(`${w.sessionId} ${k}`);
      }
    }
    for (const k of want) {
      if (got.has(k)) continue;
      counts[k.split("|")[0]].fn++;
      mine.fn++;
      falseNegatives.push(`${w.sessionId} ${k}`);
    }
    results.push({
      sessionId: w.sessionId,
      kind,
      channel: w.channel,
      language: language ?? null,
      set: set ?? "dev",
      injectionClass: injectionClass ?? null,
      source: source ?? null,
      findings: mine,
      byDetector: counts,
      falsePositives,
      falseNegatives,
      transcriptMatch,
      costMatch,
      maturationCount: page.maturationCount,
      ...(transcriptMatch ? {} : { diff: firstDifference(expected, actual) }),
      ...(costMatch ? {} : { diff: `cost: got ${JSON.stringify(cost.models)} total ${cost.totalCostUsd}` }),
    });
  }
  return summarize(results, Date.now() - started);
}

/** What the comparison looks at: type, content, first-seen time, tool identity, edited flag. */
function project(i: any): ExpectedItem {
  const out: ExpectedItem = {
    type: i.type,
    content: i.type === "event" ? i.name : i.content,
    timestamp: new Date(i.timestamp).toISOString(),
  };
  if (i.type === "tool_call" || i.type === "tool_result")
    Object.assign(out, { toolName: i.toolName ?? null, toolCallId: i.toolCallId ?? null });
  if (i.edited === true) out.edited = true;
  return out;
}
function normalize(i: ExpectedItem): ExpectedItem {
  const out: ExpectedItem = { type: i.type, content: i.content, timestamp: i.timestamp };
  if (i.type === "tool_call" || i.type === "tool_result")
    Object.assign(out, { toolName: i.toolName ?? null, toolCallId: i.toolCallId ?? null });
  if (i.edited) out.edited = true;
  return out;
}

function firstDifference(expected: ExpectedItem[], actual: ExpectedItem[]): string {
  for (let k = 0; k < Math.max(expected.length, actual.length); k++) {
    if (JSON.stringify(expected[k]) !== JSON.stringify(actual[k]))
      return `item ${k}: expected ${JSON.stringify(expected[k])} got ${JSON.stringify(actual[k])} (lengths ${expected.length}/${actual.length})`;
  }
  return "duplicate item ids";
}

/** The key a finding is matched on (same as the writer's labels). */
function findingKey(f: any): string {
  switch (f.detector) {
    case "tool_call_unanswered":
      return String(f.evidence.toolCallId);
    case "tool_loop":
      return String(f.evidence.toolName);
    case "error_event":
      return `${f.evidence.name}@${Date.parse(f.occurredAt)}`;
    case "prompt_injection":
      return `${f.traceId}@${Date.parse(f.occurredAt)}:${f.severity}`;
    default:
      return `${f.traceId}@${Date.parse(f.occurredAt)}`;
  }
}

/** Usage and cost per model, and the session total, within a nano-dollar. */
function costMatches(cost: any, w: SessionWriter): boolean {
  const byModel = new Map<
    string,
    { calls: number; prompt: number; completion: number; cached: number; reasoning: number; cost: number | null }
  >();
  for (const c of w.calls) {
    const m = byModel.get(c.model) ?? { calls: 0, prompt: 0, completion: 0, cached: 0, reasoning: 0, cost: 0 };
    m.calls++;
    m.prompt += c.prompt;
    m.completion += c.completion;
    m.cached += c.cached;
    m.reasoning += c.reasoning;
    m.cost = m.cost === null || c.costUsd === null ? null : m.cost + c.costUsd;
    byModel.set(c.model, m);
  }
  const close = (a: number | null, b: number | null) => (a === null || b === null ? a === b : Math.abs(a - b) < 1e-9);
  const models: any[] = cost.models;
  if (models.length !== byModel.size) return false;
  for (const got of models) {
    const m = byModel.get(got.model);
    if (
      !m ||
      got.calls !== m.calls ||
      got.promptTokens !== m.prompt ||
      got.completionTokens !== m.completion ||
      got.cachedTokens !== m.cached ||
      got.reasoningTokens !== m.reasoning ||
      got.totalTokens !== m.prompt + m.completion ||
      !close(got.costUsd, m.cost)
    )
      return false;
  }
  const total = [...byModel.values()].reduce<number | null>(
    (acc, m) => (acc === null || m.cost === null ? null : acc + m.cost),
    0,
  );
  return close(cost.totalCostUsd, w.calls.length ? total : 0) || (w.calls.length === 0 && cost.totalCostUsd === null);
}
