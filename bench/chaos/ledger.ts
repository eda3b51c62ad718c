/**
 * The ledger's checks: what the clients were told (200s) and what the receivers got, against
 * what Postgres holds. Pure over its inputs except `loadStored`, which reads Postgres.
 */
import type postgres from "postgres";
import type { AckedItem, ReceivedWebhook, RequestRecord, SessionRecord } from "./load";

/** A period of the run: one fault from injection until the system was whole again, or steady state. */
export interface Window {
  name: string;
  start: number;
  end: number;
  /** Seconds from the dependency coming back until every app was ready and a canary stored. */
  recoveryS?: number;
  /** Seconds until every app was ready and each ingest acknowledged a canary (accepting again). */
  readyS?: number;
}

export interface Stored {
  traces: Map<string, { n: number; status: string; maturationCount: number }>;
  events: Map<string, number>;
  sessions: Map<string, { status: string; maturationCount: number }>;
  /** Per session: when each of its traces and events was committed (ms, ascending). */
  writes: Map<string, number[]>;
}

/**
 * A maturation may look up to this much older than a write it followed: `now()` is the
 * transaction's start, and a writer that started first can commit after a maturation.
 */
const CLOCK_SKEW_MS = 2_000;

/** Which receivers subscribe to what, per tenant index. */
export interface Subscriptions {
  sessionReceivers: (tenant: number) => string[];
  traceReceivers: (tenant: number) => string[];
}

export interface Problems {
  lost: number;
  duplicated: number;
  duplicatedMaturations: number;
  webhooksMissing: number;
  badSignatures: number;
  /**
   * Maturations minus the idle periods the clients made: positive when a stall longer than the
   * window split a burst (a real idle period as the pipeline saw it), negative when two bursts'
   * writes landed together. Informational: repeats are caught by `duplicatedMaturations`.
   */
  mergedIdlePeriods: number;
  splitIdlePeriods: number;
  notMatured: number;
  examples: string[];
}

export interface Row extends Problems {
  name: string;
  acknowledged: number;
  stored: number;
  requests: number;
  http5xx: number;
  noAnswer: number;
  p99Ms: number;
  /** Platform reads: 5xx, and answers (or none) that took longer than 5 s. */
  platform5xx: number;
  platformSlow: number;
  recoveryS?: number;
  readyS?: number;
}

/** The platform must answer, 503 at worst, within this (issue 12). */
export const PLATFORM_ANSWER_MS = 5_000;

const CHUNK = 5_000;

export async function loadStored(sql: postgres.Sql, acked: AckedItem[], sessions: SessionRecord[]): Promise<Stored> {
  const traces = new Map<string, { n: number; status: string; maturationCount: number }>();
  const events = new Map<string, number>();
  const sessionRows = new Map<string, { status: string; maturationCount: number }>();
  const traceIds = acked.filter((a) => a.kind === "trace").map((a) => a.id);
  const eventIds = acked.filter((a) => a.kind === "event").map((a) => a.id);
  const sessionIds = [...new Set(sessions.map((s) => s.sessionId))];
  for (let i = 0; i < traceIds.length; i += CHUNK) {
    const rows = await sql<{ trace_id: string; n: number; status: string; mc: number }[]>`
      select t.trace_id, count(*)::int as n, min(case when p.matured_at is null and p.trace_pk is not null then 'active' else 'matured' end) as status,
        max(case when p.matured_at is null and p.trace_pk is not null then 0 else 1 end)::int as mc
      from traces t left join pending_traces p on p.ingested_at = t.ingested_at and p.trace_pk = t.id
      where t.trace_id = any(${traceIds.slice(i, i + CHUNK)}::text[]) group by t.trace_id`;
    for (const r of rows) traces.set(r.trace_id, { n: r.n, status: r.status, maturationCount: r.mc });
  }
  for (let i = 0; i < eventIds.length; i += CHUNK) {
    const rows = await sql<{ id: string; n: number }[]>`
      select attributes->>'ledger_id' as id, count(*)::int as n
      from events where attributes->>'ledger_id' = any(${eventIds.slice(i, i + CHUNK)}::text[]) group by 1`;
    for (const r of rows) events.set(r.id, r.n);
  }
  for (let i = 0; i < sessionIds.length; i += CHUNK) {
    const rows = await sql<{ session_id: string; status: string; mc: number }[]>`
      select session_id, status, maturation_count::int as mc from sessions where session_id = any(${sessionIds.slice(i, i + CHUNK)}::text[])`;
    for (const r of rows) sessionRows.set(r.session_id, { status: r.status, maturationCount: r.mc });
  }
  const writes = new Map<string, number[]>();
  for (let i = 0; i < sessionIds.length; i += CHUNK) {
    const ids = sessionIds.slice(i, i + CHUNK);
    const rows = await sql<{ session_id: string; at: number }[]>`
      select session_id, (extract(epoch from coalesce(pg_xact_commit_timestamp(xmin), ingested_at)) * 1000)::float8 as at from traces where session_id = any(${ids}::text[])
      union all
      select session_id, (extract(epoch from coalesce(pg_xact_commit_timestamp(xmin), ingested_at)) * 1000)::float8 from events where session_id = any(${ids}::text[])`;
    for (const r of rows) writes.set(r.session_id, [...(writes.get(r.session_id) ?? []), r.at]);
  }
  for (const list of writes.values()) list.sort((a, b) => a - b);
  return { traces, events, sessions: sessionRows, writes };
}

const empty = (): Problems => ({
  lost: 0,
  duplicated: 0,
  duplicatedMaturations: 0,
  webhooksMissing: 0,
  badSignatures: 0,
  mergedIdlePeriods: 0,
  splitIdlePeriods: 0,
  notMatured: 0,
  examples: [],
});

/**
 * Every check of the issue, with each problem charged to the window in which the client was
 * told 200 (for sessions: its last acknowledged item).
 */
export function checkLedger(input: {
  acked: AckedItem[];
  sessions: SessionRecord[];
  stored: Stored;
  hooks: ReceivedWebhook[];
  subscriptions: Subscriptions;
  windowOf: (at: number) => string;
}): Map<string, Problems> {
  const out = new Map<string, Problems>();
  const at = (ts: number) => {
    const k = input.windowOf(ts);
    let p = out.get(k);
    if (!p) out.set(k, (p = empty()));
    return p;
  };
  const note = (p: Problems, text: string) => {
    if (p.examples.length < 5) p.examples.push(text);
  };

  // Index the webhooks: receiver -> entity -> count -> { ids, occurredAt }.
  const index = new Map<string, Map<number, { ids: Set<string>; occurred: Set<string> }>>();
  for (const h of input.hooks) {
    if (!h.valid) {
      at(h.at).badSignatures++;
      note(at(h.at), `bad signature on ${h.webhookId} at ${h.receiver}`);
    }
    const entity = h.type === "session.matured" ? `s:${h.data.session_id}` : `t:${h.data.trace_id}`;
    const key = `${h.receiver}|${entity}`;
    let byCount = index.get(key);
    if (!byCount) index.set(key, (byCount = new Map()));
    let c = byCount.get(h.data.maturation_count);
    if (!c) byCount.set(h.data.maturation_count, (c = { ids: new Set(), occurred: new Set() }));
    c.ids.add(h.webhookId);
    c.occurred.add(h.data.occurred_at);
  }

  for (const a of input.acked) {
    const p = at(a.ackAt);
    if (a.kind === "event") {
      const n = input.stored.events.get(a.id) ?? 0;
      if (n === 0) p.lost++, note(p, `event ${a.id} acknowledged, not stored`);
      if (n > 1) (p.duplicated += n - 1), note(p, `event ${a.id} stored ${n} times`);
      continue;
    }
    const row = input.stored.traces.get(a.id);
    if (!row) {
      p.lost++;
      note(p, `trace ${a.id} acknowledged, not stored`);
      continue;
    }
    if (row.n > 1) (p.duplicated += row.n - 1), note(p, `trace ${a.id} stored ${row.n} times`);
    if (row.status !== "matured") p.notMatured++, note(p, `trace ${a.id} still ${row.status}`);
    if (row.maturationCount > 1)
      (p.duplicatedMaturations += row.maturationCount - 1),
        note(p, `trace ${a.id} matured ${row.maturationCount} times`);
    for (const r of input.subscriptions.traceReceivers(a.tenant)) {
      const got = index.get(`${r}|t:${a.id}`);
      if (!got || got.size === 0) {
        if (row.status === "matured") p.webhooksMissing++, note(p, `trace.matured of ${a.id} never reached ${r}`);
        continue;
      }
      for (const [count, c] of got) {
        if (count !== 1) p.duplicatedMaturations++, note(p, `trace.matured of ${a.id} with maturation_count ${count}`);
        if (c.ids.size > 1 || c.occurred.size > 1)
          (p.duplicatedMaturations += Math.max(c.ids.size, c.occurred.size) - 1),
            note(p, `trace ${a.id}: ${c.ids.size} webhook-ids at ${r}`);
      }
    }
  }

  for (const s of input.sessions) {
    const p = at(s.lastAckAt);
    const row = input.stored.sessions.get(s.sessionId);
    if (!row) continue; // its items are counted lost above
    if (row.status !== "matured" || row.maturationCount < 1) {
      p.notMatured++;
      note(p, `session ${s.sessionId} still ${row.status} (count ${row.maturationCount})`);
      continue;
    }
    if (row.maturationCount > s.bursts) p.splitIdlePeriods += row.maturationCount - s.bursts;
    if (row.maturationCount < s.bursts) p.mergedIdlePeriods += s.bursts - row.maturationCount;
    // A repeat is a maturation with no write since the previous one: maturation n needs a write
    // committed after maturation n-1 began and before maturation n+1 began (maturation times
    // are transaction starts, from the webhooks; write times are commit times).
    const occurred = new Map<number, number>();
    for (const r of input.subscriptions.sessionReceivers(s.tenant)) {
      for (const [n, c] of index.get(`${r}|s:${s.sessionId}`) ?? [])
        for (const o of c.occurred) occurred.set(n, Date.parse(o));
    }
    const writes = input.stored.writes.get(s.sessionId) ?? [];
    for (let n = 1; n <= row.maturationCount; n++) {
      const at = occurred.get(n);
      const after = n === 1 ? -Infinity : (occurred.get(n - 1) ?? -Infinity) - CLOCK_SKEW_MS;
      const before = occurred.get(n + 1) ?? Infinity;
      if (at !== undefined && !writes.some((w) => w > after && w < before)) {
        p.duplicatedMaturations++;
        note(p, `session ${s.sessionId} matured (#${n}) with no write since maturation #${n - 1}`);
      }
    }
    for (const r of input.subscriptions.sessionReceivers(s.tenant)) {
      const got = index.get(`${r}|s:${s.sessionId}`) ?? new Map();
      for (let n = 1; n <= row.maturationCount; n++) {
        const c = got.get(n);
        if (!c) p.webhooksMissing++, note(p, `session.matured #${n} of ${s.sessionId} never reached ${r}`);
        else if (c.ids.size > 1 || c.occurred.size > 1)
          (p.duplicatedMaturations += Math.max(c.ids.size, c.occurred.size) - 1),
            note(
              p,
              `session ${s.sessionId} #${n}: ${c.ids.size} webhook-ids, ${c.occurred.size} maturation times at ${r}`,
            );
      }
      for (const n of got.keys())
        if (n > row.maturationCount || n < 1)
          p.duplicatedMaturations++,
            note(p, `session ${s.sessionId}: webhook for count ${n}, stored count ${row.maturationCount}`);
    }
  }
  return out;
}

function p99(values: number[]): number {
  if (values.length === 0) return 0;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * 0.99))];
}

/** One row per window (steady state first), plus a total. */
export function buildRows(
  windows: Window[],
  steadyName: string,
  input: {
    acked: AckedItem[];
    requests: RequestRecord[];
    platformRequests: RequestRecord[];
    stored: Stored;
    problems: Map<string, Problems>;
    windowOf: (at: number) => string;
  },
): Row[] {
  const names = [steadyName, ...windows.map((w) => w.name)];
  const rows: Row[] = names.map((name) => {
    const mine = input.acked.filter((a) => input.windowOf(a.ackAt) === name);
    const reqs = input.requests.filter((r) => input.windowOf(r.at) === name);
    const reads = input.platformRequests.filter((r) => input.windowOf(r.at) === name);
    const stored = mine.filter((a) =>
      a.kind === "trace" ? input.stored.traces.has(a.id) : input.stored.events.has(a.id),
    ).length;
    return {
      name,
      acknowledged: mine.length,
      stored,
      requests: reqs.length,
      http5xx: reqs.filter((r) => r.status >= 500).length,
      noAnswer: reqs.filter((r) => r.status === 0).length,
      p99Ms: p99(reqs.map((r) => r.ms)),
      platform5xx: reads.filter((r) => r.status >= 500).length,
      // A killed instance refuses at once (no balancer here): that is not a hang.
      platformSlow: reads.filter((r) => r.ms > PLATFORM_ANSWER_MS).length,
      recoveryS: windows.find((w) => w.name === name)?.recoveryS,
      readyS: windows.find((w) => w.name === name)?.readyS,
      ...(input.problems.get(name) ?? empty()),
    };
  });
  const total = rows.reduce<Row>(
    (t, r) => ({
      ...t,
      acknowledged: t.acknowledged + r.acknowledged,
      stored: t.stored + r.stored,
      requests: t.requests + r.requests,
      http5xx: t.http5xx + r.http5xx,
      noAnswer: t.noAnswer + r.noAnswer,
      platform5xx: t.platform5xx + r.platform5xx,
      platformSlow: t.platformSlow + r.platformSlow,
      lost: t.lost + r.lost,
      duplicated: t.duplicated + r.duplicated,
      duplicatedMaturations: t.duplicatedMaturations + r.duplicatedMaturations,
      webhooksMissing: t.webhooksMissing + r.webhooksMissing,
      badSignatures: t.badSignatures + r.badSignatures,
      mergedIdlePeriods: t.mergedIdlePeriods + r.mergedIdlePeriods,
      splitIdlePeriods: t.splitIdlePeriods + r.splitIdlePeriods,
      notMatured: t.notMatured + r.notMatured,
      examples: [...t.examples, ...r.examples].slice(0, 10),
      recoveryS: Math.max(t.recoveryS ?? 0, r.recoveryS ?? 0),
      readyS: Math.max(t.readyS ?? 0, r.readyS ?? 0),
    }),
    {
      ...empty(),
      name: "total",
      acknowledged: 0,
      stored: 0,
      requests: 0,
      http5xx: 0,
      noAnswer: 0,
      platform5xx: 0,
      platformSlow: 0,
      p99Ms: p99(input.requests.map((r) => r.ms)),
      recoveryS: 0,
    },
  );
  return [...rows, total];
}

/** True when the run met the targets that fail it: nothing lost, duplicated, missing or forged. */
export function passed(total: Row): boolean {
  return (
    total.lost === 0 &&
    total.duplicated === 0 &&
    total.duplicatedMaturations === 0 &&
    total.webhooksMissing === 0 &&
    total.badSignatures === 0 &&
    total.notMatured === 0
  );
}

/** The one printed table (markdown, so docs/reliability.md can take it as is). */
export function formatTable(rows: Row[], recoveryTargetS = 10): string {
  const head = [
    "fault",
    "acknowledged",
    "stored",
    "lost",
    "dup. stored",
    "dup. maturations",
    "webhooks missing",
    "bad sig.",
    "not matured",
    "idle split/merged",
    "ingest 5xx",
    "ingest no answer",
    "ingest p99 ms",
    "platform 5xx",
    "platform > 5 s",
    "accepting again s",
    "whole again s",
  ];
  const lines = [`| ${head.join(" | ")} |`, `|${head.map((_, i) => (i === 0 ? "---" : "---:")).join("|")}|`];
  for (const r of rows) {
    const secs = (v: number | undefined) =>
      v === undefined || r.name === "steady"
        ? ""
        : v > recoveryTargetS
          ? `${v.toFixed(1)} (+${(v - recoveryTargetS).toFixed(1)} over)`
          : v.toFixed(1);
    lines.push(
      `| ${[r.name, r.acknowledged, r.stored, r.lost, r.duplicated, r.duplicatedMaturations, r.webhooksMissing, r.badSignatures, r.notMatured, `${r.splitIdlePeriods}/${r.mergedIdlePeriods}`, r.http5xx, r.noAnswer, r.p99Ms, r.platform5xx, r.platformSlow, secs(r.readyS), secs(r.recoveryS)].join(" | ")} |`,
    );
  }
  return lines.join("\n");
}
