import { useState } from "preact/hooks";
import { Link } from "wouter-preact";
import { api, enc } from "../api";
import { buttonColumn, column, DataTable } from "../components/DataTable";
import { Outcome } from "../components/form";
import { PageShell } from "../components/PageShell";
import { when } from "../format";
import { useAction, useLoad } from "../ui";

/**
 * Telemetry ingest answered as stored that the pipeline set aside (docs/dead-letters.md): the
 * count, the oldest of them with the reason, and a replay of one or all. Admins and owners only.
 */
/** One dead letter as GET /api/v1/dead-letters lists it. */
interface DeadLetter {
  seq: number;
  at: string;
  reason: string;
  kind?: string;
  serviceName?: string;
  sessionId?: string;
}

export function DeadLettersPage() {
  const list = useLoad(
    (signal) => api<{ count: number; truncated: boolean; data: DeadLetter[] }>("/dead-letters", { signal }),
    [],
  );
  const action = useAction();
  const [outcome, setOutcome] = useState<string | null>(null);
  const replay = async (path: string) => {
    const r = await action.run(() => api<{ replayed: number; more: boolean }>(path, { method: "POST" }));
    if (!r) return;
    setOutcome(
      `${r.replayed} replayed${r.more ? "; more remain, replay again" : ""}. They appear once the pipeline has written them.`,
    );
    list.reload();
  };
  // GET /api/v1/dead-letters: {count, truncated, data: [{seq, at, reason, deliveries, kind, serviceName, sessionId}]}
  const data = list.data;
  const busy = action.busy;
  return (
    <PageShell
      title="Dead letters"
      lead="Telemetry your services sent, that ingest answered as stored, and that the pipeline could not write. Replay them once the cause is fixed: a call that did land is not stored twice."
      load={list}
      loadingWhat="Loading dead letters"
    >
      <Outcome error={action.error} notice={outcome} />
      {data && (
        <p data-testid="dead-letter-count">
          <strong>{data.count}</strong> dead {data.count === 1 ? "letter" : "letters"}
          {data.truncated ? " (at least; the scan stopped early)" : ""}.{" "}
          {data.count > 0 && (
            <button type="button" disabled={busy} onClick={() => replay("/dead-letters/replay")}>
              Replay all
            </button>
          )}
        </p>
      )}
      {data && (
        <DataTable
          caption="Dead letters, oldest first"
          rows={data.data}
          rowKey={(d) => d.seq}
          columns={[
            column("When", (d: DeadLetter) => when(d.at)),
            column("What", (d: DeadLetter) => `${d.kind ?? "?"} · ${d.serviceName ?? "?"}`),
            {
              key: "Session",
              header: "Session",
              cell: (d) =>
                d.serviceName && d.sessionId ? (
                  <Link href={`/sessions/${enc(d.serviceName)}/${enc(d.sessionId)}`}>{d.sessionId}</Link>
                ) : (
                  "—"
                ),
            },
            column("Reason", (d: DeadLetter) => d.reason, { cellClass: "url" }),
            buttonColumn((d: DeadLetter) => ({
              text: "Replay",
              label: `Replay dead letter ${d.seq}`,
              disabled: busy,
              onClick: () => replay(`/dead-letters/${d.seq}/replay`),
            })),
          ]}
        />
      )}
    </PageShell>
  );
}
