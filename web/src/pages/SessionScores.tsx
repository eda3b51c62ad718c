import { useState } from "preact/hooks";
import { api, ApiError, enc, type Me } from "../api";
import { when } from "../format";
import { ErrorBox, Loading, useLoad } from "../ui";
import { Field } from "../components/form";

const canReview = (me: Me) => me.user.role !== "viewer";

const shown = (v: unknown) => (typeof v === "number" ? String(Math.round(v * 1000) / 1000) : String(v));

/**
 * A session's scores (docs/scores.md) and, for members and above, a form to add a reviewer
 * score: the service's declared names are offered, with their categories or type.
 */
export function SessionScores({ me, service, sessionId }: { me: Me; service: string; sessionId: string }) {
  const list = useLoad(
    (signal) => api(`/telemetry/otel/sessions/${enc(service)}/${enc(sessionId)}/scores`, { signal }),
    [service, sessionId],
  );
  const configs = useLoad((signal) => api(`/scores/configs/${enc(service)}`, { signal }), [service]);
  const [name, setName] = useState("");
  const [error, setError] = useState<string | null>(null);
  const declared: any[] = configs.data?.configs ?? [];
  const config = declared.find((c) => c.name === name);
  const add = async (e: Event) => {
    e.preventDefault();
    const form = new FormData(e.target as HTMLFormElement);
    const raw = String(form.get("value") ?? "");
    const type =
      config?.dataType ??
      (raw === "true" || raw === "false" ? "boolean" : Number.isNaN(Number(raw)) ? "categorical" : "numeric");
    const value = type === "boolean" ? raw === "true" : type === "numeric" ? Number(raw) : raw;
    setError(null);
    try {
      await api("/scores", {
        body: {
          service_name: service,
          session_id: sessionId,
          name: form.get("name"),
          value,
          comment: form.get("comment") || undefined,
          source: "reviewer",
          idempotency_key: crypto.randomUUID(),
        },
      });
      (e.target as HTMLFormElement).reset();
      setName("");
      list.reload();
    } catch (err) {
      setError(err instanceof ApiError ? err.message : String(err));
    }
  };
  const scores: any[] = list.data?.scores ?? [];
  return (
    <section class="panel" aria-labelledby="scores-h">
      <h2 id="scores-h">Scores</h2>
      <ErrorBox error={list.error} />
      {list.loading && !list.data && <Loading what="Loading scores" />}
      {list.data && !scores.length && <p class="muted">No scores yet.</p>}
      {scores.length > 0 && (
        <ul class="scores">
          {scores.map((s) => (
            <li key={s.scoreId}>
              <strong>{s.name}</strong>: {shown(s.value)}{" "}
              <span class="muted small">
                ({s.source.replace("_", " ")}, {when(s.createdAt)})
              </span>
              {s.comment && <p class="small">{s.comment}</p>}
            </li>
          ))}
        </ul>
      )}
      {canReview(me) && (
        <form class="form" onSubmit={add} aria-labelledby="review-h">
          <h3 id="review-h">Add a review score</h3>
          <Field label="Name">
            <input
              name="name"
              required
              maxLength={128}
              list="score-names"
              value={name}
              onInput={(e) => setName((e.target as HTMLInputElement).value)}
            />
            <datalist id="score-names">
              {declared.map((c) => (
                <option key={c.name} value={c.name} />
              ))}
            </datalist>
          </Field>
          <label class="field" htmlFor="score-value">
            <span>Value</span>
            {config?.dataType === "categorical" ? (
              <select id="score-value" name="value" required>
                {(config.categories ?? []).map((c: string) => (
                  <option key={c} value={c}>
                    {c}
                  </option>
                ))}
              </select>
            ) : config?.dataType === "boolean" ? (
              <select id="score-value" name="value" required>
                <option value="true">yes</option>
                <option value="false">no</option>
              </select>
            ) : (
              <input
                id="score-value"
                name="value"
                required
                maxLength={128}
                inputMode={config ? "decimal" : undefined}
              />
            )}
          </label>
          <Field label="Comment">
            <input name="comment" maxLength={2000} />
          </Field>
          {error && (
            <p class="error" role="alert">
              {error}
            </p>
          )}
          <button type="submit">Add score</button>
        </form>
      )}
    </section>
  );
}
