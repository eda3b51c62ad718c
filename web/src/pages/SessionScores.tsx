import { useState } from "preact/hooks";
import { api, enc, type Me } from "../api";
import { when } from "../format";
import { useAction, useLoad } from "../ui";
import { Field, Outcome } from "../components/form";
import { LoadStatus, Panel } from "../components/Panel";

const canReview = (me: Me) => me.user.role !== "viewer";

const shown = (v: unknown) => (typeof v === "number" ? String(Math.round(v * 1000) / 1000) : String(v));

/** What a reviewer typed, as the score's type: the declared one, else guessed from the text. */
function typedValue(raw: string, declaredType?: string) {
  const type =
    declaredType ??
    (raw === "true" || raw === "false" ? "boolean" : Number.isNaN(Number(raw)) ? "categorical" : "numeric");
  return type === "boolean" ? raw === "true" : type === "numeric" ? Number(raw) : raw;
}

/**
 * A session's scores (docs/scores.md) and, for members and above, a form to add a reviewer
 * score: the service's declared names are offered, with their categories or type.
 */
export function SessionScores({ me, service, sessionId }: { me: Me; service: string; sessionId: string }) {
  const list = useLoad(
    (signal) => api(`/telemetry/otel/sessions/${enc(service)}/${enc(sessionId)}/scores`, { signal }),
    [service, sessionId],
  );
  const scores: any[] = list.data?.scores ?? [];
  return (
    <Panel headingId="scores-h" title="Scores">
      <LoadStatus load={list} what="Loading scores" isEmpty={() => !scores.length} empty="No scores yet." />
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
      {canReview(me) && <ReviewScoreForm service={service} sessionId={sessionId} onAdded={list.reload} />}
    </Panel>
  );
}

/** A reviewer's score for the session: a declared name (or a new one), its value and a comment. */
function ReviewScoreForm(p: { service: string; sessionId: string; onAdded: () => void }) {
  const configs = useLoad((signal) => api(`/scores/configs/${enc(p.service)}`, { signal }), [p.service]);
  const [name, setName] = useState("");
  const action = useAction();
  const declared: any[] = configs.data?.configs ?? [];
  const config = declared.find((c) => c.name === name);
  const add = async (e: Event) => {
    e.preventDefault();
    const target = e.target as HTMLFormElement;
    const form = new FormData(target);
    const added = await action.run(async () => {
      await api("/scores", {
        body: {
          service_name: p.service,
          session_id: p.sessionId,
          name: form.get("name"),
          value: typedValue(String(form.get("value") ?? ""), config?.dataType),
          comment: form.get("comment") || undefined,
          source: "reviewer",
          idempotency_key: crypto.randomUUID(),
        },
      });
      return true;
    });
    if (!added) return;
    target.reset();
    setName("");
    p.onAdded();
  };
  return (
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
        <ScoreValue config={config} />
      </label>
      <Field label="Comment">
        <input name="comment" maxLength={2000} />
      </Field>
      <Outcome error={action.error} />
      <button type="submit">Add score</button>
    </form>
  );
}

/** The value's control: the declared categories, yes/no, or free text (a number when declared numeric). */
function ScoreValue({ config }: { config?: { dataType: string; categories?: string[] } }) {
  if (config?.dataType === "categorical")
    return (
      <select id="score-value" name="value" required>
        {(config.categories ?? []).map((c) => (
          <option key={c} value={c}>
            {c}
          </option>
        ))}
      </select>
    );
  if (config?.dataType === "boolean")
    return (
      <select id="score-value" name="value" required>
        <option value="true">yes</option>
        <option value="false">no</option>
      </select>
    );
  return <input id="score-value" name="value" required maxLength={128} inputMode={config ? "decimal" : undefined} />;
}
