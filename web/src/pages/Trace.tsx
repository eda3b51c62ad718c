import { useEffect } from "preact/hooks";
import { Link } from "wouter-preact";
import { api, enc } from "../api";
import { ms, num, usd, when } from "../format";
import { Facts } from "../components/Facts";
import { PageShell } from "../components/PageShell";
import { Badge, useLoad } from "../ui";
import { type CallCost, CostBreakdown } from "../components/CostBreakdown";
import { Panel } from "../components/Panel";

interface Span {
  spanId: string;
  parentSpanId: string | null;
  name: string;
  kind: string;
  startTime: string;
  endTime: string | null;
  durationMs: number | null;
  attributes: Record<string, unknown>;
}

/** Spans in tree order (depth-first, children by start time), each with its depth. */
export function spanRows(spans: Span[]): Array<{ span: Span; depth: number }> {
  const ids = new Set(spans.map((s) => s.spanId));
  const children = new Map<string | null, Span[]>();
  for (const s of spans) {
    const parent = s.parentSpanId && ids.has(s.parentSpanId) ? s.parentSpanId : null;
    if (!children.has(parent)) children.set(parent, []);
    children.get(parent)!.push(s);
  }
  for (const list of children.values()) list.sort((a, b) => a.startTime.localeCompare(b.startTime));
  const out: Array<{ span: Span; depth: number }> = [];
  const walk = (parent: string | null, depth: number) => {
    for (const s of children.get(parent) ?? []) {
      out.push({ span: s, depth });
      if (depth < 50) walk(s.spanId, depth + 1);
    }
  };
  walk(null, 0);
  return out;
}

export function TracePage({ service, traceId }: { service: string; traceId: string }) {
  const load = useLoad(
    async (signal) => {
      const [trace, spans] = await Promise.all([
        api(`/telemetry/otel/trace/${enc(traceId)}?serviceName=${enc(service)}`, { signal }),
        api(`/telemetry/otel/spans/${enc(service)}/${enc(traceId)}`, { signal }),
      ]);
      return { trace, spans: spans.spans as Span[] };
    },
    [service, traceId],
  );
  const data = load.data;
  const target = location.hash.startsWith("#span-") ? location.hash.slice(6) : null;
  useEffect(() => {
    if (data && target) document.getElementById(`span-${target}`)?.scrollIntoView({ block: "center" });
  }, [data, target]);

  if (!data) return <PageShell title={<>Trace {traceId}</>} load={load} loadingWhat="Loading trace" />;
  const { trace, spans } = data;
  const rows = spanRows(spans);
  const start = Math.min(...spans.map((s) => Date.parse(s.startTime)));
  const end = Math.max(...spans.map((s) => Date.parse(s.endTime ?? s.startTime)));
  const total = Math.max(1, end - start);
  return (
    <PageShell
      crumbs={
        <>
          <Link href={`/sessions?service=${enc(service)}`}>Sessions</Link> /{" "}
          {trace.sessionId && (
            <>
              <Link href={`/sessions/${enc(service)}/${enc(trace.sessionId)}`}>{trace.sessionId}</Link> /{" "}
            </>
          )}
          trace
        </>
      }
      title={<>Trace {traceId}</>}
    >
      <Facts
        inline
        of={[
          ["Model", trace.model ?? "—"],
          ["Started", when(trace.startTime)],
          ["Duration", ms(trace.durationMs)],
          ["Tokens", num(trace.usage?.totalTokens)],
          ["Cost", usd(trace.costUsd)],
          ["Status", <Badge kind={trace.status}>{trace.status}</Badge>],
        ]}
      />
      {trace.cost && (
        <CostBreakdown
          calls={trace.cost.calls.map((c: CallCost) => ({
            key: String(c.index),
            name: `Call ${c.index + 1}`,
            call: c,
          }))}
        />
      )}
      <Panel headingId="spans-h" title={<>Spans ({spans.length})</>}>
        <ol class="spans" aria-label="Span tree">
          {rows.map(({ span, depth }) => {
            const left = ((Date.parse(span.startTime) - start) / total) * 100;
            const width = Math.max(0.5, ((span.durationMs ?? 0) / total) * 100);
            return (
              <li key={span.spanId} id={`span-${span.spanId}`} class={`span${span.spanId === target ? " target" : ""}`}>
                <details>
                  <summary>
                    <span class="span-name" style={{ paddingLeft: `${depth * 1.1}rem` }}>
                      <Badge kind="kind">{span.kind}</Badge> {span.name}
                    </span>
                    <span class="span-bar" aria-hidden="true">
                      <span style={{ left: `${left}%`, width: `${Math.min(width, 100 - left)}%` }} />
                    </span>
                    <span class="span-ms">{ms(span.durationMs)}</span>
                  </summary>
                  <pre class="code">{JSON.stringify(span.attributes, null, 2)}</pre>
                </details>
              </li>
            );
          })}
        </ol>
      </Panel>
    </PageShell>
  );
}
