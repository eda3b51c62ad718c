import { useState } from "preact/hooks";
import { useLocation } from "wouter-preact";
import { api, enc, type Me } from "../api";
import { when } from "../format";
import { column, DataTable } from "../components/DataTable";
import { PageShell } from "../components/PageShell";
import { useLoad } from "../ui";
import { MonitorForm, StateBadge } from "./Monitors";
import { Panel } from "../components/Panel";

/** The aggregate over the last 24 h as a line, the thresholds as dashed lines. */
function Chart({ points, monitor }: { points: any[]; monitor: any }) {
  const values = points.map((p) => p.value).filter((v): v is number => typeof v === "number");
  if (values.length === 0) return <p class="muted">No evaluations in the last 24 hours.</p>;
  const levels = [monitor.threshold, monitor.warning_threshold].filter((v): v is number => typeof v === "number");
  const lo = Math.min(...values, ...levels);
  const hi = Math.max(...values, ...levels);
  const [w, h] = [600, 160];
  const t0 = Date.parse(points[0].at);
  const t1 = Math.max(Date.parse(points[points.length - 1].at), t0 + 60_000);
  const x = (at: string) => ((Date.parse(at) - t0) / (t1 - t0)) * (w - 20) + 10;
  const y = (v: number) => h - 10 - ((v - lo) / (hi - lo || 1)) * (h - 20);
  const line = points
    .filter((p) => typeof p.value === "number")
    .map((p) => `${x(p.at).toFixed(1)},${y(p.value).toFixed(1)}`)
    .join(" ");
  return (
    <svg viewBox={`0 0 ${w} ${h}`} class="chart" role="img" aria-label={`${monitor.metric} over the last 24 hours`}>
      {levels.map((v, i) => (
        <line
          key={i}
          x1={10}
          x2={w - 10}
          y1={y(v)}
          y2={y(v)}
          stroke={i === 0 ? "#c0392b" : "#d68910"}
          stroke-dasharray="4 4"
        />
      ))}
      <polyline points={line} fill="none" stroke="currentColor" stroke-width={2} />
    </svg>
  );
}

export function MonitorPage({ me, id }: { me: Me; id: string }) {
  const data = useLoad((signal) => api(`/monitors/${enc(id)}`, { signal }), [id]);
  const [editing, setEditing] = useState(false);
  const [, navigate] = useLocation();
  if (!data.data) return <PageShell title="Monitor" load={data} />;
  const { monitor: m, points, changes } = data.data;
  const remove = async () => {
    if (!confirm(`Delete monitor ${m.name} and its history?`)) return;
    await api(`/monitors/${enc(id)}`, { method: "DELETE" });
    navigate("/monitors");
  };
  return (
    <PageShell title={<>Monitor {m.name}</>}>
      <p>
        <StateBadge state={m.state} /> since {when(m.state_since)} · {m.service_name} · {m.metric}
        {m.metric_arg ? ` (${m.metric_arg})` : ""} over {m.window_seconds / 60} min, alert{" "}
        {m.direction === "above" ? "≥" : "≤"} {m.threshold}
        {m.warning_threshold !== null ? `, warning ${m.warning_threshold}` : ""}, hysteresis {m.hysteresis}
      </p>
      <Panel headingId="chart-h" title="Last 24 hours">
        <Chart points={points} monitor={m} />
      </Panel>
      <Panel headingId="changes-h" title="State changes">
        <DataTable
          rows={changes as any[]}
          rowKey={(c) => c.seq}
          empty="None yet."
          columns={[
            column("When", (c: any) => when(c.occurred_at)),
            column("Change", (c: any) => (
              <>
                <StateBadge state={c.from} /> → <StateBadge state={c.to} /> ({c.transition})
              </>
            )),
            column("Value", (c: any) => Math.round(c.value * 1000) / 1000),
            column("Samples", (c: any) => c.samples),
            column("Webhook", (c: any) =>
              c.event_type ? `${c.event_type}${c.published_at ? "" : " (pending)"}` : "—",
            ),
          ]}
        />
      </Panel>
      {me.user.role !== "viewer" && (
        <>
          {editing ? (
            <MonitorForm
              me={me}
              initial={m}
              onSaved={() => {
                setEditing(false);
                data.reload();
              }}
            />
          ) : (
            <div class="actions">
              <button type="button" onClick={() => setEditing(true)}>
                Edit
              </button>
              <button type="button" class="danger" onClick={remove}>
                Delete
              </button>
            </div>
          )}
        </>
      )}
    </PageShell>
  );
}
