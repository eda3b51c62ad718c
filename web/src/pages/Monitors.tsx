import { useState } from "preact/hooks";
import { Link, useLocation } from "wouter-preact";
import { api, ApiError, enc, type Me } from "../api";
import { column, DataTable } from "../components/DataTable";
import { Field, Outcome, Options } from "../components/form";
import { PageShell } from "../components/PageShell";
import { when } from "../format";
import { Badge, useLoad } from "../ui";

/** The metrics a monitor can watch (docs/monitors.md); `arg` names what metric_arg means. */
export const METRICS: Array<[string, string, string?]> = [
  ["latency_p95", "Latency p95 (ms)"],
  ["latency_p50", "Latency p50 (ms)"],
  ["latency_p99", "Latency p99 (ms)"],
  ["cost", "Cost per session (USD)"],
  ["tokens", "Tokens per session"],
  ["error_rate", "Error rate (0-1)"],
  ["problem_rate", "Problem rate (0-1)"],
  ["finding_rate", "Finding rate of a detector (0-1)", "detector"],
  ["score_mean", "Mean of a score", "score name"],
  ["category_share", "Share of a score's label (0-1)", "name:label"],
];
const STATE_KIND: Record<string, string> = { ok: "complete", warning: "partial", alert: "problem" };
export const StateBadge = ({ state }: { state: string }) => <Badge kind={STATE_KIND[state] ?? state}>{state}</Badge>;
const canChange = (me: Me) => me.user.role !== "viewer";
const fmt = (v: number | null | undefined) =>
  v === null || v === undefined ? "—" : String(Math.round(v * 1000) / 1000);

/** The form's fields as a monitor definition (only the ones given). */
function definitionOf(form: HTMLFormElement): Record<string, unknown> {
  const f = new FormData(form);
  const str = (k: string) => String(f.get(k) ?? "").trim();
  const numOr = (k: string) => (str(k) === "" ? undefined : Number(str(k)));
  const filters: Record<string, string> = {};
  for (const k of ["environment", "model", "label"]) if (str(k)) filters[k] = str(k);
  return {
    service_name: str("service"),
    name: str("name"),
    metric: str("metric"),
    ...(str("metric_arg") ? { metric_arg: str("metric_arg") } : {}),
    filters,
    window_seconds: Math.round(Number(str("window_minutes")) * 60),
    direction: str("direction"),
    threshold: Number(str("threshold")),
    warning_threshold: numOr("warning_threshold") ?? null,
    hysteresis: numOr("hysteresis") ?? 0,
    min_samples: numOr("min_samples") ?? 1,
  };
}

/** Create or edit: the definition and a preview of its aggregate over the last window. */
export function MonitorForm({ me, initial, onSaved }: { me: Me; initial?: any; onSaved: (m: any) => void }) {
  const [metric, setMetric] = useState<string>(initial?.metric ?? "latency_p95");
  const [preview, setPreview] = useState<any>(null);
  const [error, setError] = useState<string | null>(null);
  const arg = METRICS.find(([m]) => m === metric)?.[2];
  const act = async (form: HTMLFormElement, what: "preview" | "save") => {
    setError(null);
    try {
      const body = definitionOf(form);
      if (what === "preview") setPreview(await api("/monitors/preview", { body }));
      else if (initial)
        onSaved(
          await api(`/monitors/${enc(initial.id)}`, { method: "PUT", body: { ...body, service_name: undefined } }),
        );
      else onSaved(await api("/monitors", { body }));
    } catch (err) {
      setError(err instanceof ApiError ? err.message : String(err));
    }
  };
  const i = initial ?? {};
  return (
    <form
      class="panel form"
      aria-labelledby="monitor-form-h"
      onSubmit={(e) => {
        e.preventDefault();
        void act(e.target as HTMLFormElement, "save");
      }}
    >
      <h2 id="monitor-form-h">{initial ? "Edit monitor" : "New monitor"}</h2>
      <Field label="Service">
        <select name="service" required disabled={!!initial} defaultValue={i.service_name}>
          {me.services.map((s) => (
            <option key={s.id} value={s.name}>
              {s.name}
            </option>
          ))}
        </select>
      </Field>
      <Field label="Name">
        <input name="name" required maxLength={200} defaultValue={i.name} />
      </Field>
      <Field label="Metric">
        <select name="metric" value={metric} onChange={(e) => setMetric((e.target as HTMLSelectElement).value)}>
          <Options of={METRICS} />
        </select>
      </Field>
      {arg && (
        <Field label={arg}>
          <input name="metric_arg" required defaultValue={i.metric_arg ?? ""} />
        </Field>
      )}
      <fieldset class="checks">
        <legend>Only sessions with (optional)</legend>
        {["environment", "model", "label"].map((k) => (
          <Field key={k} label={k}>
            <input name={k} defaultValue={i.filters?.[k] ?? ""} />
          </Field>
        ))}
      </fieldset>
      <Field label="Window (minutes)">
        <input
          name="window_minutes"
          type="number"
          min={1}
          max={1440}
          required
          defaultValue={String((i.window_seconds ?? 3600) / 60)}
        />
      </Field>
      <Field label="Alert when the value is">
        <select name="direction" defaultValue={i.direction ?? "above"}>
          <option value="above">at or above</option>
          <option value="below">at or below</option>
        </select>
      </Field>
      <Field label="Threshold">
        <input name="threshold" type="number" step="any" required defaultValue={i.threshold ?? ""} />
      </Field>
      <Field label="Warning threshold (optional)">
        <input name="warning_threshold" type="number" step="any" defaultValue={i.warning_threshold ?? ""} />
      </Field>
      <Field label="Hysteresis">
        <input name="hysteresis" type="number" step="any" min={0} defaultValue={i.hysteresis ?? 0} />
      </Field>
      <Field label="Minimum samples">
        <input name="min_samples" type="number" min={1} defaultValue={i.min_samples ?? 1} />
      </Field>
      {preview && <PreviewLine preview={preview} />}
      <Outcome error={error} />
      <div class="actions">
        <button type="button" onClick={(e) => act((e.target as HTMLElement).closest("form")!, "preview")}>
          Preview
        </button>
        <button type="submit">{initial ? "Save" : "Create monitor"}</button>
      </div>
    </form>
  );
}

export function MonitorsPage({ me }: { me: Me }) {
  const list = useLoad((signal) => api("/monitors", { signal }), []);
  const [, navigate] = useLocation();
  const monitors: any[] = list.data?.monitors ?? [];
  return (
    <PageShell title="Monitors" load={list} loadingWhat="Loading monitors">
      {list.data && (
        <DataTable
          caption="Monitors"
          rows={monitors}
          rowKey={(m) => m.id}
          empty="No monitors yet."
          columns={[
            column("Name", (m: any) => <Link href={`/monitors/${m.id}`}>{m.name}</Link>),
            column("Service", (m: any) => m.service_name),
            column("Metric", (m: any) => `${m.metric}${m.metric_arg ? ` (${m.metric_arg})` : ""}`),
            column("Value", (m: any) => fmt(m.last_value)),
            column("Threshold", (m: any) => `${m.direction === "above" ? "≥" : "≤"} ${m.threshold}`),
            column("State", (m: any) => <StateBadge state={m.state} />),
            column("Since", (m: any) => when(m.state_since)),
          ]}
        />
      )}
      {canChange(me) && <MonitorForm me={me} onSaved={(m) => navigate(`/monitors/${m.id}`)} />}
    </PageShell>
  );
}

/** What the definition's aggregate was over the last window, and the state it would take. */
function PreviewLine({ preview }: { preview: any }) {
  return (
    <p role="status" data-testid="preview">
      Last window: <strong>{fmt(preview.value)}</strong> over {preview.samples} samples, would be{" "}
      <StateBadge state={preview.state} />
      {preview.truncated && <span class="muted small"> (newest 5,000 only)</span>}
    </p>
  );
}
