import { useSearchParams } from "wouter-preact";
import { api, enc, type Me } from "../api";
import { Field, Options } from "../components/form";
import { PageShell } from "../components/PageShell";
import { num, when } from "../format";
import { FirstTraceHelp, ServicePicker, useLoad, useService } from "../ui";
import { Chart } from "./Overview";

const WINDOWS = [
  ["1h", "Last hour (per minute)"],
  ["24h", "Last 24 hours (per hour)"],
  ["7d", "Last 7 days (per hour)"],
] as const;

const sum = (r: Record<string, number>) => Object.values(r).reduce((a, b) => a + b, 0);
const LABELS: Record<string, string> = {
  queue_full: "queue full",
  retries_exhausted: "retries exhausted",
  refused: "refused",
  sampled_out: "sampled out",
  rate_limited: "rate limited",
  too_large: "too large",
};
const label = (k: string) => LABELS[k] ?? k;

/** A stage's reasons, the non-zero ones, as "a 3 · b 1". */
function reasons(r: Record<string, number>) {
  const parts = Object.entries(r).filter(([, n]) => n > 0);
  return parts.length ? parts.map(([k, n]) => `${label(k)} ${num(n)}`).join(" · ") : "—";
}

/**
 * The ledger (docs/ledger.md): what a service's clients asked to send, what ingest accepted and
 * refused, what was stored, dead-lettered and replayed, and what is in flight, with the tenant's
 * reconciliation. An unbalanced book is the page's first line.
 */
export function LedgerPage({ me }: { me: Me }) {
  const [service, setService] = useService(me);
  const [params, setParams] = useSearchParams();
  const win = params.get("window") ?? "1h";
  const load = useLoad(
    (signal) => (service ? api(`/ledger/${enc(service)}?window=${enc(win)}`, { signal }) : Promise.resolve(null)),
    [service, win],
  );
  if (!me.services.length)
    return (
      <PageShell title="Ledger">
        <FirstTraceHelp me={me} />
      </PageShell>
    );
  const l = load.data;
  const times: number[] = l?.series.map((s: any) => Date.parse(s.t) / 1000) ?? [];
  const range: [number, number] = l ? [Date.parse(l.from) / 1000, Date.parse(l.to) / 1000] : [0, 1];
  const line = (f: (s: any) => number) => l?.series.map(f) ?? [];
  const count = (v: number) => num(Math.round(v));
  const rec = l?.reconciliation;
  const t = l?.totals;
  return (
    <PageShell
      title="Ledger"
      load={load}
      loadingWhat="Loading the ledger"
      head={
        <div class="filters">
          <ServicePicker me={me} value={service} onChange={setService} />
          <Field label="Window">
            <select
              value={win}
              onChange={(e) =>
                setParams((p) => {
                  const next = new URLSearchParams(p);
                  next.set("window", (e.target as HTMLSelectElement).value);
                  return next;
                })
              }
            >
              <Options of={WINDOWS} />
            </select>
          </Field>
        </div>
      }
    >
      {rec && !rec.balanced && (
        <div class="error" role="alert" data-testid="ledger-unbalanced">
          <strong>The books do not balance</strong> (since {when(rec.unbalancedSince)}, checked {when(rec.checkedAt)}):{" "}
          {rec.problems.join("; ")}.
        </div>
      )}
      {rec?.balanced && (
        <p class="muted small" data-testid="ledger-balanced">
          Balanced: every item accepted from {when(rec.from)} to {when(rec.to)} is stored or dead-lettered (checked{" "}
          {when(rec.checkedAt)}).
        </p>
      )}
      {t && (
        <>
          <LedgerBooks t={t} />
          <Chart
            id="ledger"
            title="Accepted, stored and lost"
            times={times}
            range={range}
            lines={[
              { label: "Accepted", values: line((s) => sum(s.accepted)), format: count },
              { label: "Stored", values: line((s) => s.stored), format: count },
              { label: "Lost", values: line((s) => s.loss), format: count },
              { label: "In flight", values: line((s) => s.inFlight), format: count },
            ]}
          />
        </>
      )}
    </PageShell>
  );
}

/** The books over the window: each stage's items and, where there are some, its reasons or doors. */
function LedgerBooks({ t }: { t: any }) {
  return (
    <table class="list" aria-label="The books over the window">
      <thead>
        <tr>
          <th scope="col">Stage</th>
          <th scope="col">Items</th>
          <th scope="col">By reason or door</th>
        </tr>
      </thead>
      <tbody>
        <tr>
          <th scope="row">Asked to send (SDKs)</th>
          <td data-testid="ledger-requested">{num(t.sdkRequested)}</td>
          <td>—</td>
        </tr>
        <tr>
          <th scope="row">Dropped by the SDKs</th>
          <td>{num(sum(t.sdkDropped))}</td>
          <td>{reasons(t.sdkDropped)}</td>
        </tr>
        <tr>
          <th scope="row">Accepted by ingest</th>
          <td data-testid="ledger-accepted">{num(sum(t.accepted))}</td>
          <td>{reasons(t.accepted)}</td>
        </tr>
        <tr>
          <th scope="row">Refused by ingest</th>
          <td>{num(sum(t.refused))}</td>
          <td>{reasons(t.refused)}</td>
        </tr>
        <tr>
          <th scope="row">Stored</th>
          <td data-testid="ledger-stored">{num(t.stored)}</td>
          <td>—</td>
        </tr>
        <tr>
          <th scope="row">Dead-lettered / replayed</th>
          <td>
            {num(t.deadLettered)} / {num(t.replayed)}
          </td>
          <td>—</td>
        </tr>
        <tr>
          <th scope="row">In flight</th>
          <td data-testid="ledger-in-flight">{num(t.inFlight)}</td>
          <td>accepted − stored − dead-lettered + replayed</td>
        </tr>
      </tbody>
    </table>
  );
}
