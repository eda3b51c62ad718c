import { Link, useSearchParams } from "wouter-preact";
import { api, enc, type Me } from "../api";
import { ms, num, usd, when } from "../format";
import { Pager, usePaging } from "../pager";
import { Badge, FirstTraceHelp, ServicePicker, useLoad, useService } from "../ui";
import { column, DataTable } from "../components/DataTable";
import { Field, Options } from "../components/form";
import { PageShell } from "../components/PageShell";

export const PAGE_SIZE = 50;
const SORTS: Array<[string, string]> = [
  ["lastActivityAt", "Last activity"],
  ["firstActivityAt", "Started"],
  ["costUsd", "Cost"],
  ["durationMs", "Duration"],
  ["problems", "Problems"],
  ["turns", "Turns"],
];

/** The URL's filter parameters as the filtered search's `filters` (docs/platform-api.md). */
export function filtersFrom(p: URLSearchParams) {
  const f: Array<{ field: string; operator: string; value: unknown }> = [];
  const env = p.get("environment");
  if (env) f.push({ field: "environment", operator: "equals", value: env });
  const from = p.get("from");
  if (from) f.push({ field: "lastActivityAt", operator: "gte", value: new Date(from).toISOString() });
  const to = p.get("to");
  if (to) f.push({ field: "lastActivityAt", operator: "lt", value: new Date(to).toISOString() });
  if (p.get("problems") === "1") f.push({ field: "problems", operator: "gt", value: 0 });
  const minCost = p.get("minCost");
  if (minCost && !Number.isNaN(Number(minCost))) f.push({ field: "costUsd", operator: "gte", value: Number(minCost) });
  const maxCost = p.get("maxCost");
  if (maxCost && !Number.isNaN(Number(maxCost))) f.push({ field: "costUsd", operator: "lte", value: Number(maxCost) });
  const model = p.get("model");
  if (model) f.push({ field: "model", operator: "equals", value: model });
  return f;
}

export function SessionsPage({ me }: { me: Me }) {
  const [service, setService] = useService(me);
  const [params] = useSearchParams();
  const paging = usePaging(PAGE_SIZE);
  const sort = params.get("sort") ?? "lastActivityAt";
  const dir = params.get("dir") === "asc" ? "asc" : "desc";
  const query = params.toString();
  const { data, error, loading } = useLoad(
    (signal) =>
      service
        ? api("/telemetry/otel/sessions/filtered", {
            body: {
              serviceName: service,
              filters: filtersFrom(params),
              sort: { field: sort, direction: dir },
              limit: PAGE_SIZE,
              ...paging.position,
            },
            signal,
          })
        : Promise.resolve(null),
    [service, query],
  );
  if (!me.services.length)
    return (
      <PageShell title="Sessions">
        <FirstTraceHelp me={me} />
      </PageShell>
    );

  const sessions: any[] = data?.sessions ?? [];
  const pg = data?.pagination;
  const filtered = filtersFrom(params).length > 0;

  return (
    <PageShell
      title="Sessions"
      load={{ data, error, loading }}
      loadingWhat="Loading sessions"
      head={<SessionFilters me={me} service={service} setService={setService} sort={sort} dir={dir} />}
    >
      {data &&
        !sessions.length &&
        (filtered || paging.deep ? <p class="muted">No sessions match these filters.</p> : <FirstTraceHelp />)}
      {sessions.length > 0 && (
        <DataTable
          stacked
          busy={loading}
          caption={<>Sessions of {service}</>}
          rows={sessions}
          rowKey={(s) => s.sessionId}
          columns={[
            column("Session", (s: any) => (
              <Link href={`/sessions/${enc(service!)}/${enc(s.sessionId)}`}>{s.sessionId}</Link>
            )),
            column("Environment", (s: any) => s.environment ?? "—"),
            column("Status", (s: any) => <Badge kind={s.status}>{s.status}</Badge>),
            column("Last activity", (s: any) => when(s.lastActivityAt)),
            column("Turns", (s: any) => num(s.metrics?.turns), { numeric: true }),
            column("Duration", (s: any) => ms(s.metrics?.durationMs), { numeric: true }),
            column("Cost", (s: any) => usd(s.metrics?.costUsd), { numeric: true }),
            column(
              "Problems",
              (s: any) =>
                s.metrics?.problems ? <Badge kind="problem">{s.metrics.problems}</Badge> : num(s.metrics?.problems),
              { numeric: true },
            ),
          ]}
        />
      )}
      {pg && sessions.length > 0 && <Pager pg={pg} count={sessions.length} paging={paging} />}
    </PageShell>
  );
}

/** The search's filters and order; Apply puts them in the address (the page reads them from there). */
function SessionFilters({
  me,
  service,
  setService,
  sort,
  dir,
}: {
  me: Me;
  service?: string;
  setService: (name: string) => void;
  sort: string;
  dir: string;
}) {
  const [params, setParams] = useSearchParams();
  const apply = (e: Event) => {
    e.preventDefault();
    const form = new FormData(e.target as HTMLFormElement);
    const next = new URLSearchParams();
    next.set("service", service!);
    for (const k of ["environment", "from", "to", "minCost", "maxCost", "model", "sort", "dir"]) {
      const v = String(form.get(k) ?? "").trim();
      if (v) next.set(k, v);
    }
    if (form.get("problems")) next.set("problems", "1");
    setParams(next);
  };
  return (
    <form class="filters" onSubmit={apply} aria-label="Filter sessions">
      <ServicePicker me={me} value={service} onChange={setService} />
      <Field label="Environment">
        <input name="environment" defaultValue={params.get("environment") ?? ""} placeholder="any" />
      </Field>
      <Field label="From">
        <input name="from" type="datetime-local" defaultValue={params.get("from") ?? ""} />
      </Field>
      <Field label="To">
        <input name="to" type="datetime-local" defaultValue={params.get("to") ?? ""} />
      </Field>
      <Field label="Min cost (USD)">
        <input name="minCost" type="number" min="0" step="any" defaultValue={params.get("minCost") ?? ""} />
      </Field>
      <Field label="Max cost (USD)">
        <input name="maxCost" type="number" min="0" step="any" defaultValue={params.get("maxCost") ?? ""} />
      </Field>
      <Field label="Model">
        <input name="model" defaultValue={params.get("model") ?? ""} placeholder="any" />
      </Field>
      <label class="check">
        <input name="problems" type="checkbox" defaultChecked={params.get("problems") === "1"} /> Has problems
      </label>
      <Field label="Sort by">
        <select name="sort" defaultValue={sort}>
          <Options of={SORTS} />
        </select>
      </Field>
      <Field label="Order">
        <select name="dir" defaultValue={dir}>
          <option value="desc">Descending</option>
          <option value="asc">Ascending</option>
        </select>
      </Field>
      <button type="submit">Apply</button>
    </form>
  );
}
