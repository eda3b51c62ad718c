import { useState } from "preact/hooks";
import { Link } from "wouter-preact";
import { api, ApiError, enc, isAdmin, type Me } from "../api";
import { ActionError, Badge, ServicePicker, useLoad, useService } from "../ui";
import { Field } from "../components/form";
import { column, DataTable } from "../components/DataTable";
import { PageShell } from "../components/PageShell";

/** What the form can create (docs/evaluations.md): a model judge, or a deterministic check. */
const KINDS: Array<[string, string]> = [
  ["openai", "Judge: OpenAI-compatible chat"],
  ["anthropic", "Judge: Anthropic messages"],
  ["pattern", "Check: matches or avoids a pattern"],
  ["length", "Check: answer length"],
  ["json_schema", "Check: answer is JSON for a schema"],
  ["cites_tool_result", "Check: answer cites a tool result"],
];
/** Who may change evaluators and give verdicts: every role but viewer. */
export const canChange = (me: Me) => me.user.role !== "viewer";
const fmt = (v: number | null | undefined, digits = 3) =>
  v === null || v === undefined ? "—" : String(Math.round(v * 10 ** digits) / 10 ** digits);
/** A score as shown: numbers to 3 decimals. */
export const shown = (v: unknown) => (typeof v === "number" ? fmt(v) : String(v));

/** The form's fields as an evaluator definition. */
function definitionOf(form: HTMLFormElement, service: string): Record<string, unknown> {
  const f = new FormData(form);
  const str = (k: string) => String(f.get(k) ?? "").trim();
  const kind = str("kind");
  const body: Record<string, unknown> = { service_name: service, name: str("name") };
  if (kind === "openai" || kind === "anthropic") {
    body.judge = { provider: kind, url: str("url"), model: str("model"), prompt: str("prompt") };
    const output = str("output");
    body.output =
      output === "number"
        ? { kind: "number", min: Number(str("min") || 0), max: Number(str("max") || 1) }
        : output === "label"
          ? {
              kind: "label",
              labels: str("labels")
                .split(",")
                .map((l) => l.trim())
                .filter(Boolean),
            }
          : { kind: "boolean" };
    if (str("api_key")) body.api_key = str("api_key");
    if (str("budget")) body.daily_budget_usd = Number(str("budget"));
  } else if (kind === "pattern")
    body.check = { type: "pattern", pattern: str("pattern"), mode: str("mode"), flags: "i" };
  else if (kind === "length")
    body.check = {
      type: "length",
      ...(str("max") ? { max: Number(str("max")) } : {}),
      ...(str("min") ? { min: Number(str("min")) } : {}),
    };
  else if (kind === "json_schema") body.check = { type: "json_schema", schema: JSON.parse(str("schema") || "{}") };
  else body.check = { type: "cites_tool_result" };
  if (str("review_below")) body.review_below = Number(str("review_below"));
  if (str("sampling")) body.sampling_rate = Number(str("sampling"));
  return body;
}

function EvaluatorForm({ me, service, onSaved }: { me: Me; service: string; onSaved: () => void }) {
  const [kind, setKind] = useState("openai");
  const [output, setOutput] = useState("number");
  const [error, setError] = useState<string | null>(null);
  const judge = kind === "openai" || kind === "anthropic";
  return (
    <form
      class="panel form"
      aria-labelledby="evaluator-form-h"
      onSubmit={async (e) => {
        e.preventDefault();
        setError(null);
        try {
          await api("/evaluators", { body: definitionOf(e.target as HTMLFormElement, service) });
          (e.target as HTMLFormElement).reset();
          onSaved();
        } catch (err) {
          setError(err instanceof ApiError || err instanceof SyntaxError ? err.message : String(err));
        }
      }}
    >
      <h2 id="evaluator-form-h">New evaluator</h2>
      <Field label="Name (its scores' name)">
        <input name="name" required maxLength={128} />
      </Field>
      <Field label="Kind">
        <select name="kind" value={kind} onChange={(e) => setKind((e.target as HTMLSelectElement).value)}>
          {KINDS.map(([k, label]) => (
            <option key={k} value={k} disabled={(k === "openai" || k === "anthropic") && !isAdmin(me)}>
              {label}
            </option>
          ))}
        </select>
      </Field>
      {judge && <JudgeFields output={output} setOutput={setOutput} />}
      <CheckFields kind={kind} />
      <Field label="Review below (optional)">
        <input name="review_below" type="number" step="any" />
      </Field>
      <Field label="Sampling rate (0-1, optional)">
        <input name="sampling" type="number" step="any" min="0" max="1" />
      </Field>
      <ActionError error={error} />
      <button type="submit">Create evaluator</button>
    </form>
  );
}

/** A judge's fields: its endpoint, model, write-only key, instructions, output and budget. */
function JudgeFields({ output, setOutput }: { output: string; setOutput: (o: string) => void }) {
  return (
    <>
      <p class="muted">A judge sends this service's conversations to the endpoint below (docs: Privacy).</p>
      <Field label="Endpoint URL">
        <input name="url" required type="url" placeholder="https://api.openai.com/v1/chat/completions" />
      </Field>
      <Field label="Model">
        <input name="model" required />
      </Field>
      <Field label="API key (write-only)">
        <input name="api_key" type="password" autoComplete="off" />
      </Field>
      <label class="field">
        <span>
          Instructions ({"{{final_answer}}"}, {"{{transcript}}"}, ...)
        </span>
        <textarea
          name="prompt"
          required
          rows={4}
          defaultValue="Rate how helpful {{final_answer}} is for {{last_user_message}}."
        />
      </label>
      <Field label="Output">
        <select name="output" value={output} onChange={(e) => setOutput((e.target as HTMLSelectElement).value)}>
          <option value="number">Number in a range</option>
          <option value="boolean">Boolean</option>
          <option value="label">One of labels</option>
        </select>
      </Field>
      {output === "number" && (
        <>
          <Field label="Min">
            <input name="min" type="number" step="any" defaultValue="0" />
          </Field>
          <Field label="Max">
            <input name="max" type="number" step="any" defaultValue="1" />
          </Field>
        </>
      )}
      {output === "label" && (
        <Field label="Labels (comma-separated)">
          <input name="labels" required />
        </Field>
      )}
      <Field label="Daily budget (USD, optional)">
        <input name="budget" type="number" step="any" min="0" />
      </Field>
    </>
  );
}

/** A check's fields, by kind (a judge, or a check without settings, has none). */
function CheckFields({ kind }: { kind: string }) {
  return (
    <>
      {kind === "pattern" && (
        <>
          <Field label="Pattern">
            <input name="pattern" required />
          </Field>
          <Field label="Passes when the answer">
            <select name="mode">
              <option value="matches">matches it</option>
              <option value="avoids">avoids it</option>
            </select>
          </Field>
        </>
      )}
      {kind === "length" && (
        <>
          <Field label="Min characters">
            <input name="min" type="number" min="0" />
          </Field>
          <Field label="Max characters">
            <input name="max" type="number" min="0" />
          </Field>
        </>
      )}
      {kind === "json_schema" && (
        <Field label="JSON Schema">
          <textarea name="schema" rows={4} defaultValue='{"type": "object"}' />
        </Field>
      )}
    </>
  );
}

function AgreementCell({ id }: { id: string }) {
  const { data } = useLoad((signal) => api(`/evaluators/${enc(id)}/agreement`, { signal }), [id]);
  if (!data) return <span class="muted">…</span>;
  if (data.pairs === 0) return <span class="muted">no reviews yet</span>;
  return data.meanAbsoluteDifference !== null ? (
    <span>
      mean |difference| {fmt(data.meanAbsoluteDifference)} ({data.pairs} reviewed)
    </span>
  ) : (
    <span>
      agreement {fmt(data.agreementRate! * 100, 1)}%, kappa {fmt(data.kappa)} ({data.pairs} reviewed)
    </span>
  );
}

/** /evaluations: a service's evaluators, their state, spend and agreement with reviewers. */
export function EvaluatorsPage({ me }: { me: Me }) {
  const [service, setService] = useService(me);
  const [version, setVersion] = useState(0);
  const [error, setError] = useState<string | null>(null);
  const load = useLoad(
    (signal) => (service ? api(`/evaluators?serviceName=${enc(service)}`, { signal }) : Promise.resolve(null)),
    [service, version],
  );
  const act = async (fn: () => Promise<unknown>) => {
    setError(null);
    try {
      await fn();
      setVersion((v) => v + 1);
    } catch (err) {
      setError(err instanceof ApiError ? err.message : String(err));
    }
  };
  return (
    <PageShell
      title="Evaluators"
      head={
        <>
          <p>
            Evaluators judge each settled conversation; their verdicts are scores.{" "}
            <Link href={`/reviews?service=${enc(service ?? "")}`}>Review queue</Link>
          </p>
          <ServicePicker me={me} value={service} onChange={setService} />
        </>
      }
      load={service ? load : undefined}
    >
      <ActionError error={error} />
      {load.data && (
        <DataTable
          label="Evaluators"
          columns={evaluatorColumns(canChange(me) ? act : undefined)}
          rows={load.data.evaluators}
          rowKey={(e: any) => e.id}
          empty="No evaluators on this service: nothing is judged (evaluations are opt-in per service)."
        />
      )}
      {canChange(me) && service && <EvaluatorForm me={me} service={service} onSaved={() => setVersion((v) => v + 1)} />}
    </PageShell>
  );
}

/** The evaluators' columns; with `act` (who may change them), pause or resume and delete. */
function evaluatorColumns(act?: (fn: () => Promise<unknown>) => void) {
  const columns = [
    column("Name", (e: any) => e.name),
    column("Kind", (e: any) =>
      e.kind === "judge" ? `${e.definition.judge.provider} ${e.definition.judge.model}` : e.definition.check.type,
    ),
    column("Version", (e: any) => e.version),
    column("Status", (e: any) => (
      <>
        <Badge kind={e.status === "active" && !e.budget.exhausted ? "complete" : "problem"}>
          {e.budget.exhausted ? "over budget today" : e.status}
        </Badge>
        {e.status_reason && <div class="muted">{e.status_reason}</div>}
      </>
    )),
    column("Spent today", (e: any) => (
      <>
        ${fmt(e.budget.spent_usd, 4)}
        {e.budget.limit_usd !== null && ` of $${fmt(e.budget.limit_usd, 4)}`}
      </>
    )),
    column("Agreement with reviewers", (e: any) => <AgreementCell id={e.id} />),
  ];
  if (!act) return columns;
  const path = (e: any) => `/evaluators/${enc(e.id)}`;
  return columns.concat(
    column("Actions", (e: any) => (
      <>
        <button
          type="button"
          class="link"
          onClick={() =>
            act(() => api(path(e), { method: "PUT", body: { status: e.status === "active" ? "paused" : "active" } }))
          }
        >
          {e.status === "active" ? "Pause" : "Resume"}
        </button>{" "}
        <button type="button" class="link" onClick={() => act(() => api(path(e), { method: "DELETE" }))}>
          Delete
        </button>
      </>
    )),
  );
}
