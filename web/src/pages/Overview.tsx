import { useEffect, useRef } from "preact/hooks";
import { Link, useSearchParams } from "wouter-preact";
import uPlot from "uplot";
import { api, enc, type Me } from "../api";
import { ms, num, usd } from "../format";
import { FirstTraceHelp, ServicePicker, useLoad, useService } from "../ui";
import { type AxisKind, axisLabels, axisRange, axisSteps, axisWidth } from "./chart-axes";
import { column, DataTable } from "../components/DataTable";
import { Field, Options } from "../components/form";
import { PageShell } from "../components/PageShell";
import { Panel } from "../components/Panel";

const WINDOWS = [
  ["1h", "Last hour"],
  ["24h", "Last 24 hours"],
  ["7d", "Last 7 days"],
  ["30d", "Last 30 days"],
] as const;

const pct = (part: number, whole: number) => (whole ? `${((part / whole) * 100).toFixed(1)}%` : "—");
const TIME = new Intl.DateTimeFormat(undefined, { month: "short", day: "numeric", hour: "2-digit", minute: "2-digit" });

interface Line {
  label: string;
  values: number[];
  format: (v: number) => string;
}

/** The words a screen reader (or anyone) gets instead of the plot: total or average, peak and when. */
function summarize(times: number[], lines: Line[], average: boolean): string {
  if (!times.length) return "No data in this window.";
  return lines
    .map((l) => {
      const total = l.values.reduce((a, b) => a + b, 0);
      const peak = Math.max(...l.values);
      const at = times[l.values.indexOf(peak)];
      const head = average ? `average ${l.format(total / l.values.length)}` : `${l.format(total)} in total`;
      return `${l.label}: ${head}, highest ${l.format(peak)} at ${TIME.format(new Date(at * 1000))}`;
    })
    .join("; ");
}

const COLORS = ["#2f5dcc", "#b3261e", "#1e7a3c", "#8a5a00"];

/**
 * A time-series chart (uPlot) with a text summary. The figure takes keyboard focus and is
 * described by the summary; the canvas itself is hidden from assistive technology.
 */
export function Chart({
  id,
  title,
  times,
  range,
  lines,
  kind = "count",
  average = false,
}: {
  id: string;
  title: string;
  /** What the y axis counts (default items): rates are bounded to 0-100%, counts tick on integers (chart-axes.ts). */
  kind?: AxisKind;
  times: number[];
  /** The window in Unix seconds: the x axis spans it even where nothing happened. */
  range: [number, number];
  lines: Line[];
  average?: boolean;
}) {
  const box = useRef<HTMLDivElement>(null);
  useEffect(() => {
    const el = box.current;
    if (!el || !times.length) return;
    const plot = new uPlot(
      {
        width: Math.max(200, el.clientWidth),
        height: 180,
        legend: { show: true },
        cursor: { drag: { x: false, y: false } },
        scales: { x: { time: true, range: () => range }, y: { range: (_u, _min, max) => axisRange(kind, max) } },
        axes: [
          {},
          {
            ...(axisSteps(kind) ? { incrs: axisSteps(kind) } : {}),
            values: (_u, ticks) => {
              const labels = axisLabels(kind, ticks, lines[0].format);
              el.dataset.yLabels = labels.join("|"); // what the canvas shows, for the browser tests
              return labels;
            },
            size: (_u, values) => {
              const width = axisWidth(values ?? []);
              el.dataset.yWidth = String(width);
              return width;
            },
          },
        ],
        series: [
          {},
          ...lines.map((l, i) => ({
            label: l.label,
            stroke: COLORS[i % COLORS.length],
            width: 2,
            value: (_u: uPlot, v: number | null) => (v == null ? "—" : l.format(v)),
          })),
        ],
      },
      [times, ...lines.map((l) => l.values)],
      el,
    );
    const resize = new ResizeObserver(() => plot.setSize({ width: Math.max(200, el.clientWidth), height: 180 }));
    resize.observe(el);
    return () => {
      resize.disconnect();
      plot.destroy();
    };
  }, [times.join(), lines.map((l) => l.values.join()).join("|")]);
  return (
    <figure class="panel chart" tabIndex={0} aria-labelledby={`${id}-h`} aria-describedby={`${id}-s`}>
      <h2 id={`${id}-h`}>{title}</h2>
      <div ref={box} aria-hidden="true" class="chart-plot" data-testid={`plot-${id}`} />
      <figcaption id={`${id}-s`} class="muted small" data-testid={`summary-${id}`}>
        {summarize(times, lines, average)}
      </figcaption>
    </figure>
  );
}

/** The home page: a service's traffic, cost, latency and problems over a window, from rollups. */
export function OverviewPage({ me }: { me: Me }) {
  const [service, setService] = useService(me);
  const [params, setParams] = useSearchParams();
  const win = params.get("window") ?? "24h";
  const environment = params.get("environment") ?? "";
  const set = (key: string, value: string) =>
    setParams((p) => {
      const next = new URLSearchParams(p);
      if (value) next.set(key, value);
      else next.delete(key);
      return next;
    });
  const { data, error, loading } = useLoad(
    (signal) =>
      service
        ? api(`/overview/${enc(service)}?window=${enc(win)}${environment ? `&environment=${enc(environment)}` : ""}`, {
            signal,
          })
        : Promise.resolve(null),
    [service, win, environment],
  );
  if (!me.services.length)
    return (
      <PageShell title="Overview">
        <FirstTraceHelp me={me} />
      </PageShell>
    );
  const o = data;
  return (
    <PageShell
      title="Overview"
      load={{ data, error, loading }}
      loadingWhat="Loading overview"
      head={
        <div class="filters">
          <ServicePicker me={me} value={service} onChange={setService} />
          <Field label="Environment">
            <select value={environment} onChange={(e) => set("environment", (e.target as HTMLSelectElement).value)}>
              <option value="">All environments</option>
              {(o?.environments ?? []).map((e: string) => (
                <option key={e} value={e}>
                  {e || "(none)"}
                </option>
              ))}
            </select>
          </Field>
          <Field label="Window">
            <select value={win} onChange={(e) => set("window", (e.target as HTMLSelectElement).value)}>
              <Options of={WINDOWS} />
            </select>
          </Field>
        </div>
      }
    >
      {o && (
        <>
          <OverviewTotals o={o} service={service} />
          <OverviewCharts o={o} />
          <ByModel o={o} />
          <TopIssues o={o} service={service!} />
        </>
      )}
    </PageShell>
  );
}

/** The window's totals, the unpriced calls, and a notice when nothing matured in it. */
function OverviewTotals({ o, service }: { o: any; service?: string }) {
  return (
    <>
      <dl class="metrics inline" aria-label="Totals">
        <div>
          <dt>Sessions</dt>
          <dd data-testid="total-sessions">{num(o.totals.sessions)}</dd>
        </div>
        <div>
          <dt>Traces</dt>
          <dd>{num(o.totals.traces)}</dd>
        </div>
        <div>
          <dt>Cost</dt>
          <dd>{usd(o.totals.costUsd)}</dd>
        </div>
        <div>
          <dt>Tokens</dt>
          <dd>{num(o.totals.promptTokens + o.totals.completionTokens)}</dd>
        </div>
        <div>
          <dt>Latency p50 / p95</dt>
          <dd>
            {ms(o.totals.latencyP50Ms)} / {ms(o.totals.latencyP95Ms)}
          </dd>
        </div>
        <div>
          <dt>Sessions with errors</dt>
          <dd>{pct(o.totals.errorSessions, o.totals.sessions)}</dd>
        </div>
        <div>
          <dt>Sessions with problems</dt>
          <dd>{pct(o.totals.problemSessions, o.totals.sessions)}</dd>
        </div>
      </dl>
      {o.totals.unpricedCalls > 0 && (
        <p class="muted small" data-testid="unpriced-calls">
          {num(o.totals.unpricedCalls)} {o.totals.unpricedCalls === 1 ? "call" : "calls"} unpriced: the price book has
          no price for their model, so their cost is not in the total.
        </p>
      )}
      {!o.totals.sessions && (
        <p class="notice" role="status">
          No session of {service} matured in this window. Sessions count here once they have been idle for the
          maturation window.
        </p>
      )}
    </>
  );
}

/** Traffic, cost, tokens and rates over the window. */
function OverviewCharts({ o }: { o: any }) {
  const times: number[] = o.series.map((s: any) => Date.parse(s.t) / 1000);
  const range: [number, number] = [Date.parse(o.from) / 1000, Date.parse(o.to) / 1000];
  const series = (f: (s: any) => number) => o.series.map(f);
  const count = (v: number) => num(Math.round(v));
  const rate = (v: number) => `${(v * 100).toFixed(1)}%`;
  return (
    <div class="charts">
      <Chart
        id="traffic"
        title="Traces and sessions"
        kind="count"
        times={times}
        range={range}
        lines={[
          { label: "Traces", values: series((s) => s.traces), format: count },
          { label: "Sessions", values: series((s) => s.sessions), format: count },
        ]}
      />
      <Chart
        id="cost"
        title="Cost"
        kind="usd"
        times={times}
        range={range}
        lines={[{ label: "Cost (USD)", values: series((s) => s.costUsd), format: usd }]}
      />
      <Chart
        id="tokens"
        title="Tokens"
        kind="count"
        times={times}
        range={range}
        lines={[{ label: "Tokens", values: series((s) => s.tokens), format: count }]}
      />
      <Chart
        id="rates"
        title="Error and problem rates"
        kind="rate"
        average
        times={times}
        range={range}
        lines={[
          {
            label: "Sessions with errors",
            values: series((s) => (s.sessions ? s.errorSessions / s.sessions : 0)),
            format: rate,
          },
          {
            label: "Sessions with problems",
            values: series((s) => (s.sessions ? s.problemSessions / s.sessions : 0)),
            format: rate,
          },
        ]}
      />
    </div>
  );
}

/** Cost, tokens and latency by model. */
function ByModel({ o }: { o: any }) {
  return (
    <Panel headingId="models-h" title="By model">
      <DataTable
        compact
        caption="Cost, tokens and latency by model"
        rows={o.byModel as any[]}
        rowKey={(m) => m.model}
        empty="No model calls in this window."
        columns={[
          column("Model", (m: any) => m.model),
          column("Calls", (m: any) => num(m.traces), { numeric: true }),
          column(
            "Cost",
            (m: any) => (
              <>
                {usd(m.costUsd)}
                {m.unpricedCalls > 0 && <span class="muted small"> · {num(m.unpricedCalls)} unpriced</span>}
              </>
            ),
            { numeric: true },
          ),
          column("Tokens in / out", (m: any) => `${num(m.promptTokens)} / ${num(m.completionTokens)}`, {
            numeric: true,
          }),
          column("Latency p50", (m: any) => ms(m.latencyP50Ms), { numeric: true }),
          column("p95", (m: any) => ms(m.latencyP95Ms), { numeric: true }),
        ]}
      />
    </Panel>
  );
}

/** The window's most frequent issues. */
function TopIssues({ o, service }: { o: any; service: string }) {
  return (
    <Panel headingId="top-issues-h" title="Top issues">
      {o.topIssues.length ? (
        <ul class="plain">
          {o.topIssues.map((i: any) => (
            <li key={i.id}>
              <Link href={`/issues/${enc(service!)}/${enc(i.id)}`}>{i.title}</Link>{" "}
              <span class="muted small">
                {i.severity} · {num(i.occurrences)} occurrences in {num(i.affectedSessions)} sessions
              </span>
            </li>
          ))}
        </ul>
      ) : (
        <p class="muted">No issues seen in this window.</p>
      )}
    </Panel>
  );
}
