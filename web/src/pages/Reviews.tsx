import { useState } from "preact/hooks";
import { Link } from "wouter-preact";
import { api, enc, type Me } from "../api";
import { when } from "../format";
import { Badge, ServicePicker, useAction, useLoad, useService } from "../ui";
import { Transcript, type Item } from "./Transcript";
import { Field, Outcome } from "../components/form";
import { LoadStatus } from "../components/Panel";
import { PageShell } from "../components/PageShell";
import { canChange, shown } from "./Evaluations";

/** Why a session is in the review queue (docs/evaluations.md), as its tabs name it. */
const WHY: Array<[string, string]> = [
  ["below_threshold", "Scored below threshold"],
  ["critical_findings", "Critical findings"],
  ["sample", "Random sample"],
];

/** One judgement beside the transcript, with the reviewer's verdict form. */
function JudgementReview({
  me,
  service,
  sessionId,
  j,
  onDone,
}: {
  me: Me;
  service: string;
  sessionId: string;
  j: any;
  onDone: () => void;
}) {
  const action = useAction();
  const out = j.output;
  return (
    <form
      class="panel form"
      aria-label={`Review of ${j.evaluatorName}`}
      onSubmit={async (e) => {
        e.preventDefault();
        const f = new FormData(e.target as HTMLFormElement);
        const raw = String(f.get("value") ?? "");
        const value = out.kind === "number" ? Number(raw) : out.kind === "boolean" ? raw === "true" : raw;
        const sent = await action.run(() =>
          api(`/reviews/${enc(service)}/${enc(sessionId)}`, {
            body: { evaluator_id: j.evaluatorId, value, comment: String(f.get("comment") ?? "") || undefined },
          }).then(() => true),
        );
        if (sent) onDone();
      }}
    >
      <h3>
        {j.evaluatorName} <span class="muted">v{j.evaluatorVersion}</span>
      </h3>
      <p>
        Judge's score: <strong data-testid="judge-score">{shown(j.value)}</strong>
        {j.injectionFlagged && <Badge kind="problem">injection in a tool result</Badge>}
      </p>
      <p data-testid="judge-reason">{j.reason ?? <span class="muted">no reason given</span>}</p>
      <p class="muted">judged {when(j.judgedAt)}</p>
      {j.reviews.length > 0 && <p>Reviewed: {j.reviews.map((r: any) => shown(r.value)).join(", ")}</p>}
      {canChange(me) && (
        <>
          {out.kind === "number" ? (
            <Field label="Your verdict">
              <input name="value" type="number" step="any" min={out.min} max={out.max} required />
            </Field>
          ) : (
            <Field label="Your verdict">
              <select name="value">
                {(out.kind === "boolean" ? ["true", "false"] : out.labels).map((l: string) => (
                  <option key={l} value={l}>
                    {l}
                  </option>
                ))}
              </select>
            </Field>
          )}
          <Field label="Comment">
            <input name="comment" maxLength={2000} />
          </Field>
          <Outcome error={action.error} />
          <button type="submit">Submit verdict</button>
        </>
      )}
    </form>
  );
}

function ReviewItem({ me, service, item, onDone }: { me: Me; service: string; item: any; onDone: () => void }) {
  const transcript = useLoad(
    (signal) => api(`/telemetry/otel/sessions/${enc(service)}/${enc(item.sessionId)}/transcript?limit=200`, { signal }),
    [service, item.sessionId],
  );
  return (
    <div class="review">
      <div>
        <h2>
          <Link href={`/sessions/${enc(service)}/${enc(item.sessionId)}`}>{item.sessionId}</Link>
        </h2>
        {item.criticalFindings.map((f: any) => (
          <p key={f.title}>
            <Badge kind="problem">critical</Badge> {f.title}
          </p>
        ))}
        <LoadStatus load={transcript} />
        {transcript.data && (
          <Transcript items={transcript.data.items as Item[]} service={service} sessionId={item.sessionId} />
        )}
      </div>
      <div>
        {item.judgements.length === 0 && <p class="muted">No evaluator judged this session.</p>}
        {item.judgements.map((j: any) => (
          <JudgementReview
            key={j.evaluatorId}
            me={me}
            service={service}
            sessionId={item.sessionId}
            j={j}
            onDone={onDone}
          />
        ))}
      </div>
    </div>
  );
}

/** /reviews: what the judges flagged, with the judge's score and reason beside the transcript. */
export function ReviewQueuePage({ me }: { me: Me }) {
  const [service, setService] = useService(me);
  const [why, setWhy] = useState("below_threshold");
  const [version, setVersion] = useState(0);
  const [open, setOpen] = useState<string | null>(null);
  const load = useLoad(
    (signal) => (service ? api(`/reviews/${enc(service)}?why=${why}`, { signal }) : Promise.resolve(null)),
    [service, why, version],
  );
  const data = load.data;
  const item = data?.items.find((i: any) => i.sessionId === open) ?? data?.items[0];
  return (
    <PageShell
      title="Review queue"
      head={
        <>
          <ServicePicker me={me} value={service} onChange={setService} />
          <div role="tablist" aria-label="Why a session is in the queue">
            {WHY.map(([w, label]) => (
              <button key={w} type="button" role="tab" aria-selected={why === w} onClick={() => setWhy(w)}>
                {label}
              </button>
            ))}
          </div>
        </>
      }
      load={service ? load : undefined}
    >
      {data && data.items.length === 0 && <p class="muted">Nothing to review.</p>}
      {data && data.items.length > 0 && (
        <>
          <ul aria-label="Sessions to review">
            {data.items.map((i: any) => (
              <li key={i.sessionId}>
                <button
                  type="button"
                  class="link"
                  aria-current={i === item ? "true" : undefined}
                  onClick={() => setOpen(i.sessionId)}
                >
                  {i.sessionId}
                </button>{" "}
                {i.judgements.map((j: any) => `${j.evaluatorName} ${shown(j.value)}`).join(", ")}
              </li>
            ))}
          </ul>
          {item && service && (
            <ReviewItem
              key={item.sessionId}
              me={me}
              service={service}
              item={item}
              onDone={() => {
                setOpen(null);
                setVersion((v) => v + 1);
              }}
            />
          )}
        </>
      )}
    </PageShell>
  );
}
