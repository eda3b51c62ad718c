import { useEffect } from "preact/hooks";
import { Link } from "wouter-preact";
import { api, enc, type Me } from "../api";
import type { ProblemAnalysis } from "../api-types";
import { ms, num, usd, when } from "../format";
import { Badge, StatusBadge, useLoad } from "../ui";
import { Transcript, type Item } from "./Transcript";
import { SessionScores } from "./SessionScores";
import { type BreakdownCall, type CallCost, CostBreakdown } from "../components/CostBreakdown";
import { column, DataTable } from "../components/DataTable";
import { PageShell } from "../components/PageShell";
import { LoadStatus, Panel } from "../components/Panel";
import { useMore } from "../components/useMore";

/** Items per transcript read: the API's maximum page (docs/platform-api.md). */
export const TRANSCRIPT_PAGE = 500;
/**
 * Traces per cost-breakdown read. Each is a stored payload the platform inflates and prices, so a
 * page is smaller than the API's 500 (100 traces of a 60-message session: about 2x the time of the
 * same page of S/traces); the breakdown loads beside the rest of the page, never before it.
 */
export const COST_PAGE = 100;

interface CostTrace {
  traceId: string;
  cost: { calls: CallCost[] };
}

/** The session's calls in order, each named by its place in the session and linked to its trace. */
export function sessionCalls(service: string, traces: CostTrace[]): BreakdownCall[] {
  let n = 0;
  return traces.flatMap((t) =>
    t.cost.calls.map((call) => {
      n++;
      return {
        key: `${t.traceId}/${call.index}`,
        name: `Call ${n}`,
        label: <Link href={`/traces/${enc(service)}/${enc(t.traceId)}`}>Call {n}</Link>,
        call,
      };
    }),
  );
}
const METRICS: Array<[string, string, (v: any) => string]> = [
  ["turns", "Turns", num],
  ["modelCalls", "Model calls", num],
  ["toolCalls", "Tool calls", num],
  ["totalTokens", "Tokens", num],
  ["durationMs", "Duration", ms],
  ["errors", "Errors", num],
  ["problems", "Problems", num],
  ["costUsd", "Cost", usd],
];

export function SessionPage({ me, service, sessionId }: { me: Me; service: string; sessionId: string }) {
  const S = `/telemetry/otel/sessions/${enc(service)}/${enc(sessionId)}`;
  const transcript = useMore(async (offset: number) => {
    const r = await api(`${S}/transcript?limit=${TRANSCRIPT_PAGE}&offset=${offset}`);
    return { rows: r.items as Item[], next: r.pagination.nextOffset as number | null };
  });
  const costs = useMore(async (cursor: string) => {
    const r = await api(`${S}/cost-breakdown?limit=${COST_PAGE}&cursor=${enc(cursor)}`);
    return { rows: r.traces as CostTrace[], next: r.pagination.nextCursor as string | null };
  });
  const main = useLoad(
    async (signal) => {
      const [first, tldr, cost, problems, metrics] = await Promise.all([
        api(`${S}/transcript?limit=${TRANSCRIPT_PAGE}`, { signal }),
        api(`${S}/tldr`, { signal }),
        // Its `models` are loose JSON objects in the platform's schema (sessions/model.ts).
        api(`${S}/cost-by-model`, { signal }),
        api<ProblemAnalysis>(`${S}/problem-analysis`, { signal }),
        api(`/telemetry/metrics/session/${enc(service)}/${enc(sessionId)}`, { signal }),
      ]);
      transcript.reset({ rows: first.items, next: first.pagination.nextOffset });
      return { transcript: first, tldr, cost, problems, metrics };
    },
    [S],
  );
  // The breakdown reads payloads: loaded on its own, beside the rest (read again when they are).
  const breakdown = useLoad(
    async (signal) => {
      const r = await api(`${S}/cost-breakdown?limit=${COST_PAGE}`, { signal });
      costs.reset({ rows: r.traces, next: r.pagination.nextCursor });
      return true;
    },
    [S],
  );
  const d = main.data;

  // Not complete yet: read again when the server says to (retryAfterSeconds), within 2-30 s.
  useEffect(() => {
    if (!d || d.transcript.status === "complete") return;
    const s = Math.min(30, Math.max(2, d.transcript.retryAfterSeconds ?? 5));
    const timer = setTimeout(() => {
      main.reload();
      breakdown.reload();
    }, s * 1000);
    return () => clearTimeout(timer);
  }, [d]);

  const calls = sessionCalls(service, costs.rows);
  return (
    <PageShell
      crumbs={
        <>
          <Link href={`/sessions?service=${enc(service)}`}>Sessions</Link> / {service}
        </>
      }
      title={`Session ${sessionId}`}
      load={main}
      loadingWhat="Loading session"
    >
      {d && (
        <div class="session-grid">
          <TranscriptPanel
            state={d.transcript}
            analysed={d.tldr}
            items={transcript}
            service={service}
            sessionId={sessionId}
          />
          <aside class="side">
            <SessionScores me={me} service={service} sessionId={sessionId} />
            <TldrPanel tldr={d.tldr} />
            <MetricsPanel metrics={d.metrics.metrics} />
            <CostByModelPanel cost={d.cost} />
            <FindingsPanel problems={d.problems.problems} service={service} />
          </aside>
        </div>
      )}
      {d && !breakdown.data && <LoadStatus load={breakdown} what="Loading the cost breakdown" />}
      {d && breakdown.data && (
        <CostBreakdown calls={calls} openCalls={calls.length <= 3} partial={costs.next !== null}>
          {costs.next !== null && (
            <button type="button" onClick={costs.more} disabled={costs.loading}>
              {costs.loading ? "Loading…" : "Show the next calls"}
            </button>
          )}
        </CostBreakdown>
      )}
    </PageShell>
  );
}

/** The conversation, a page at a time, with where its analysis stands. */
function TranscriptPanel(p: {
  state: any;
  analysed: any;
  items: ReturnType<typeof useMore<Item, number>>;
  service: string;
  sessionId: string;
}) {
  const { state, analysed, items } = p;
  const total = state.counts?.total;
  return (
    <Panel
      headingId="transcript-h"
      title="Transcript"
      class="transcript-panel"
      status={
        <span role="status" aria-live="polite">
          <StatusBadge status={state.status} />
        </span>
      }
    >
      {state.status === "processing" && (
        <p class="muted">This session has not been analysed yet; this page refreshes by itself.</p>
      )}
      {state.truncated && <p class="notice">This transcript is longer than the stored cap; the tail is not shown.</p>}
      <p class="muted small">
        {num(total ?? items.rows.length)} items
        {analysed.computedAt && <> · analysed {when(analysed.computedAt)}</>}
        {analysed.maturationCount > 0 && <> · maturation {analysed.maturationCount}</>}
      </p>
      <Transcript items={items.rows} service={p.service} sessionId={p.sessionId} />
      {items.next !== null && (
        <button type="button" onClick={items.more} disabled={items.loading}>
          {items.loading ? "Loading…" : `Show more (${num((total ?? 0) - items.rows.length)} more items)`}
        </button>
      )}
    </Panel>
  );
}

function TldrPanel({ tldr }: { tldr: any }) {
  return (
    <Panel headingId="tldr-h" title="TL;DR">
      <p>{tldr.tldr ?? <span class="muted">Not written yet.</span>}</p>
      {tldr.source && (
        <p class="muted small">{tldr.source === "llm" ? "written by a model" : "extracted from the conversation"}</p>
      )}
    </Panel>
  );
}

function MetricsPanel({ metrics }: { metrics: Record<string, unknown> | null }) {
  return (
    <Panel headingId="metrics-h" title="Metrics">
      {metrics ? (
        <dl class="metrics">
          {METRICS.map(([k, label, f]) => (
            <div key={k}>
              <dt>{label}</dt>
              <dd>{f(metrics[k])}</dd>
            </div>
          ))}
        </dl>
      ) : (
        <p class="muted">Not computed yet.</p>
      )}
    </Panel>
  );
}

const MODEL_COLUMNS = [
  column<any>("Model", (m) => (
    <>
      {m.model}
      {m.note && <span class="muted small"> ({m.note})</span>}
      {m.unpricedCalls > 0 && <span class="muted small"> · {num(m.unpricedCalls)} unpriced</span>}
    </>
  )),
  column<any>("Calls", (m) => num(m.calls), { numeric: true }),
  column<any>("Tokens", (m) => num(m.totalTokens ?? (m.promptTokens ?? 0) + (m.completionTokens ?? 0)), {
    numeric: true,
  }),
  column<any>("Cost", (m) => usd(m.costUsd), { numeric: true }),
];

function CostByModelPanel({ cost }: { cost: any }) {
  return (
    <Panel headingId="cost-h" title="Cost by model">
      <DataTable
        columns={MODEL_COLUMNS}
        rows={cost.models}
        rowKey={(m) => m.model}
        compact
        empty="No model calls priced yet."
        foot={
          <tr>
            <th scope="row" colSpan={3}>
              Total
            </th>
            <td class="n">{usd(cost.totalCostUsd)}</td>
          </tr>
        }
      />
    </Panel>
  );
}

function FindingsPanel({ problems, service }: { problems: ProblemAnalysis["problems"]; service: string }) {
  return (
    <Panel headingId="findings-h" title="Findings">
      {problems.length ? (
        <ul class="findings">
          {problems.map((f) => (
            <li key={f.findingId}>
              <Badge kind={f.severity}>{f.severity}</Badge> <strong>{f.title}</strong>
              <div class="muted small">
                {f.detector} · {when(f.occurredAt)}
                {f.traceId && (
                  <>
                    {" "}
                    ·{" "}
                    <Link href={`/traces/${enc(service)}/${enc(f.traceId)}${f.spanId ? `#span-${f.spanId}` : ""}`}>
                      {f.spanId ? "open span" : "open trace"}
                    </Link>
                  </>
                )}
                {f.issueId && (
                  <>
                    {" "}
                    · <Link href={`/issues/${enc(service)}/${enc(f.issueId)}`}>issue</Link>
                  </>
                )}
              </div>
            </li>
          ))}
        </ul>
      ) : (
        <p class="muted">No problems found.</p>
      )}
    </Panel>
  );
}
