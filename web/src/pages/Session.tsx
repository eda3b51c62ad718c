import { useEffect, useState } from "preact/hooks";
import { Link } from "wouter-preact";
import { api, enc, type Me } from "../api";
import type { ProblemAnalysis } from "../api-types";
import { ms, num, usd, when } from "../format";
import { Badge, ErrorBox, Loading, PageTitle, StatusBadge, useLoad } from "../ui";
import { Transcript, type Item } from "./Transcript";
import { SessionScores } from "./SessionScores";
import { type BreakdownCall, type CallCost, CostBreakdown } from "../components/CostBreakdown";

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
  const [items, setItems] = useState<Item[]>([]);
  const [more, setMore] = useState<number | null>(null);
  const [loadingMore, setLoadingMore] = useState(false);
  const [costTraces, setCostTraces] = useState<CostTrace[]>([]);
  const [costNext, setCostNext] = useState<string | null>(null);
  const [loadingCost, setLoadingCost] = useState(false);
  const main = useLoad(
    async (signal) => {
      const [transcript, tldr, cost, problems, metrics] = await Promise.all([
        api(`${S}/transcript?limit=${TRANSCRIPT_PAGE}`, { signal }),
        api(`${S}/tldr`, { signal }),
        // Its `models` are loose JSON objects in the platform's schema (sessions/model.ts).
        api(`${S}/cost-by-model`, { signal }),
        api<ProblemAnalysis>(`${S}/problem-analysis`, { signal }),
        api(`/telemetry/metrics/session/${enc(service)}/${enc(sessionId)}`, { signal }),
      ]);
      setItems(transcript.items);
      setMore(transcript.pagination.nextOffset);
      return { transcript, tldr, cost, problems, metrics };
    },
    [S],
  );
  // The breakdown reads payloads: loaded on its own, beside the rest (read again when they are).
  const breakdown = useLoad(
    async (signal) => {
      const r = await api(`${S}/cost-breakdown?limit=${COST_PAGE}`, { signal });
      setCostTraces(r.traces);
      setCostNext(r.pagination.nextCursor);
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

  const loadMore = async () => {
    if (more === null) return;
    setLoadingMore(true);
    try {
      const r = await api(`${S}/transcript?limit=${TRANSCRIPT_PAGE}&offset=${more}`);
      setItems((prev) => prev.concat(r.items));
      setMore(r.pagination.nextOffset);
    } finally {
      setLoadingMore(false);
    }
  };

  const moreCost = async () => {
    if (costNext === null) return;
    setLoadingCost(true);
    try {
      const r = await api(`${S}/cost-breakdown?limit=${COST_PAGE}&cursor=${enc(costNext)}`);
      setCostTraces((prev) => prev.concat(r.traces));
      setCostNext(r.pagination.nextCursor);
    } finally {
      setLoadingCost(false);
    }
  };
  const calls = sessionCalls(service, costTraces);

  return (
    <>
      <p class="crumbs">
        <Link href={`/sessions?service=${enc(service)}`}>Sessions</Link> / {service}
      </p>
      <PageTitle>Session {sessionId}</PageTitle>
      <ErrorBox error={main.error} />
      {!d && main.loading && <Loading what="Loading session" />}
      {d && (
        <div class="session-grid">
          <section class="panel transcript-panel" aria-labelledby="transcript-h">
            <div class="panel-head">
              <h2 id="transcript-h">Transcript</h2>
              <span role="status" aria-live="polite">
                <StatusBadge status={d.transcript.status} />
              </span>
            </div>
            {d.transcript.status === "processing" && (
              <p class="muted">This session has not been analysed yet; this page refreshes by itself.</p>
            )}
            {d.transcript.truncated && (
              <p class="notice">This transcript is longer than the stored cap; the tail is not shown.</p>
            )}
            <p class="muted small">
              {num(d.transcript.counts?.total ?? items.length)} items
              {d.tldr.computedAt && <> · analysed {when(d.tldr.computedAt)}</>}
              {d.tldr.maturationCount > 0 && <> · maturation {d.tldr.maturationCount}</>}
            </p>
            <Transcript items={items} service={service} sessionId={sessionId} />
            {more !== null && (
              <button type="button" onClick={loadMore} disabled={loadingMore}>
                {loadingMore
                  ? "Loading…"
                  : `Show more (${num((d.transcript.counts?.total ?? 0) - items.length)} more items)`}
              </button>
            )}
          </section>
          <aside class="side">
            <SessionScores me={me} service={service} sessionId={sessionId} />
            <section class="panel" aria-labelledby="tldr-h">
              <h2 id="tldr-h">TL;DR</h2>
              <p>{d.tldr.tldr ?? <span class="muted">Not written yet.</span>}</p>
              {d.tldr.source && (
                <p class="muted small">
                  {d.tldr.source === "llm" ? "written by a model" : "extracted from the conversation"}
                </p>
              )}
            </section>
            <section class="panel" aria-labelledby="metrics-h">
              <h2 id="metrics-h">Metrics</h2>
              {d.metrics.metrics ? (
                <dl class="metrics">
                  {METRICS.map(([k, label, f]) => (
                    <div key={k}>
                      <dt>{label}</dt>
                      <dd>{f(d.metrics.metrics[k])}</dd>
                    </div>
                  ))}
                </dl>
              ) : (
                <p class="muted">Not computed yet.</p>
              )}
            </section>
            <section class="panel" aria-labelledby="cost-h">
              <h2 id="cost-h">Cost by model</h2>
              {d.cost.models.length ? (
                <table class="list compact">
                  <thead>
                    <tr>
                      <th scope="col">Model</th>
                      <th scope="col" class="n">
                        Calls
                      </th>
                      <th scope="col" class="n">
                        Tokens
                      </th>
                      <th scope="col" class="n">
                        Cost
                      </th>
                    </tr>
                  </thead>
                  <tbody>
                    {d.cost.models.map((m: any) => (
                      <tr key={m.model}>
                        <td>
                          {m.model}
                          {m.note && <span class="muted small"> ({m.note})</span>}
                          {m.unpricedCalls > 0 && <span class="muted small"> · {num(m.unpricedCalls)} unpriced</span>}
                        </td>
                        <td class="n">{num(m.calls)}</td>
                        <td class="n">{num(m.totalTokens ?? (m.promptTokens ?? 0) + (m.completionTokens ?? 0))}</td>
                        <td class="n">{usd(m.costUsd)}</td>
                      </tr>
                    ))}
                  </tbody>
                  <tfoot>
                    <tr>
                      <th scope="row" colSpan={3}>
                        Total
                      </th>
                      <td class="n">{usd(d.cost.totalCostUsd)}</td>
                    </tr>
                  </tfoot>
                </table>
              ) : (
                <p class="muted">No model calls priced yet.</p>
              )}
            </section>
            <section class="panel" aria-labelledby="findings-h">
              <h2 id="findings-h">Findings</h2>
              {d.problems.problems.length ? (
                <ul class="findings">
                  {d.problems.problems.map((f) => (
                    <li key={f.findingId}>
                      <Badge kind={f.severity}>{f.severity}</Badge> <strong>{f.title}</strong>
                      <div class="muted small">
                        {f.detector} · {when(f.occurredAt)}
                        {f.traceId && (
                          <>
                            {" "}
                            ·{" "}
                            <Link
                              href={`/traces/${enc(service)}/${enc(f.traceId)}${f.spanId ? `#span-${f.spanId}` : ""}`}
                            >
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
            </section>
          </aside>
        </div>
      )}
      {d && !breakdown.data && <ErrorBox error={breakdown.error} />}
      {d && !breakdown.data && breakdown.loading && <Loading what="Loading the cost breakdown" />}
      {d && breakdown.data && (
        <CostBreakdown calls={calls} openCalls={calls.length <= 3} partial={costNext !== null}>
          {costNext !== null && (
            <button type="button" onClick={moreCost} disabled={loadingCost}>
              {loadingCost ? "Loading…" : "Show the next calls"}
            </button>
          )}
        </CostBreakdown>
      )}
    </>
  );
}
