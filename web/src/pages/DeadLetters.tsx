import { useState } from "preact/hooks";
import { Link } from "wouter-preact";
import { api, ApiError, enc } from "../api";
import { when } from "../format";
import { ErrorBox, Loading, PageTitle, useLoad } from "../ui";

/**
 * Telemetry ingest answered as stored that the pipeline set aside (docs/dead-letters.md): the
 * count, the oldest of them with the reason, and a replay of one or all. Admins and owners only.
 */
export function DeadLettersPage() {
  const list = useLoad((signal) => api("/dead-letters", { signal }), []);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const [outcome, setOutcome] = useState<string | null>(null);
  const replay = async (path: string) => {
    setBusy(true);
    setError(null);
    try {
      const r = await api<{ replayed: number; more: boolean }>(path, { method: "POST" });
      setOutcome(
        `${r.replayed} replayed${r.more ? "; more remain, replay again" : ""}. They appear once the pipeline has written them.`,
      );
      list.reload();
    } catch (err) {
      setError(err instanceof ApiError ? err.message : String(err));
    } finally {
      setBusy(false);
    }
  };
  // GET /api/v1/dead-letters: {count, truncated, data: [{seq, at, reason, deliveries, kind, serviceName, sessionId}]}
  const data = list.data;
  return (
    <>
      <PageTitle>Dead letters</PageTitle>
      <p class="muted">
        Telemetry your services sent, that ingest answered as stored, and that the pipeline could not write. Replay them
        once the cause is fixed: a call that did land is not stored twice.
      </p>
      <ErrorBox error={list.error} />
      {error && (
        <p class="error" role="alert">
          {error}
        </p>
      )}
      {outcome && (
        <p class="notice" role="status">
          {outcome}
        </p>
      )}
      {list.loading && !data && <Loading what="Loading dead letters" />}
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
      {data && data.data.length > 0 && (
        <div class="table-wrap">
          <table class="list">
            <caption class="sr-only">Dead letters, oldest first</caption>
            <thead>
              <tr>
                <th scope="col">When</th>
                <th scope="col">What</th>
                <th scope="col">Session</th>
                <th scope="col">Reason</th>
                <th scope="col">
                  <span class="sr-only">Actions</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {data.data.map((d: any) => (
                <tr key={d.seq}>
                  <td>{when(d.at)}</td>
                  <td>
                    {d.kind ?? "?"} · {d.serviceName ?? "?"}
                  </td>
                  <td>
                    {d.serviceName && d.sessionId ? (
                      <Link href={`/sessions/${enc(d.serviceName)}/${enc(d.sessionId)}`}>{d.sessionId}</Link>
                    ) : (
                      "—"
                    )}
                  </td>
                  <td class="url">{d.reason}</td>
                  <td>
                    <button
                      type="button"
                      class="small"
                      disabled={busy}
                      aria-label={`Replay dead letter ${d.seq}`}
                      onClick={() => replay(`/dead-letters/${d.seq}/replay`)}
                    >
                      Replay
                    </button>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </>
  );
}
