import { Link, useSearchParams } from "wouter-preact";
import { api, enc, type Me } from "../api";
import type { IssueBreakdown, IssuesPage as IssuesPageBody } from "../api-types";
import { column, DataTable } from "../components/DataTable";
import { Facts } from "../components/Facts";
import { PageShell } from "../components/PageShell";
import { num, when } from "../format";
import { Pager, usePaging } from "../pager";
import { Badge, FirstTraceHelp, ServicePicker, useLoad, useService } from "../ui";
import { Panel } from "../components/Panel";

const PAGE = 50;
type IssueRow = IssuesPageBody["issues"][number];

export function IssuesPage({ me }: { me: Me }) {
  const [service, setService] = useService(me);
  const [params] = useSearchParams();
  const paging = usePaging(PAGE);
  const load = useLoad(
    (signal) =>
      service
        ? api<IssuesPageBody>("/telemetry/otel/issues/filtered", {
            body: { service_name: service, limit: PAGE, ...paging.position },
            signal,
          })
        : Promise.resolve(null),
    [service, params.toString()],
  );
  if (!me.services.length)
    return (
      <PageShell title="Issues">
        <FirstTraceHelp me={me} />
      </PageShell>
    );
  const data = load.data;
  const issues = data?.issues ?? [];
  return (
    <PageShell
      title="Issues"
      load={load}
      loadingWhat="Loading issues"
      head={
        <div class="filters">
          <ServicePicker me={me} value={service} onChange={setService} />
        </div>
      }
    >
      {data && (
        <DataTable
          caption={<>Issues of {service}</>}
          rows={issues}
          rowKey={(i) => i.issueId}
          empty={<>No issues in {service}. Problems the analysis finds in sessions are grouped here.</>}
          columns={[
            {
              key: "Issue",
              header: "Issue",
              cell: (i) => (
                <>
                  <Link href={`/issues/${enc(service!)}/${enc(i.issueId)}`}>{i.title}</Link>
                  <div class="muted small">{i.detector}</div>
                </>
              ),
            },
            column("Severity", (i: IssueRow) => <Badge kind={i.severity}>{i.severity}</Badge>),
            column("Occurrences", (i: IssueRow) => num(i.occurrences), { numeric: true }),
            column("Sessions", (i: IssueRow) => num(i.affectedSessions), { numeric: true }),
            column("First seen", (i: IssueRow) => when(i.firstSeenAt)),
            column("Last seen", (i: IssueRow) => when(i.lastSeenAt)),
          ]}
        />
      )}
      {data?.pagination && issues.length > 0 && <Pager pg={data.pagination} count={issues.length} paging={paging} />}
    </PageShell>
  );
}

export function IssuePage({ service, issueId }: { service: string; issueId: string }) {
  const load = useLoad(
    (signal) =>
      api<IssueBreakdown>(`/telemetry/otel/issues/${enc(issueId)}/breakdown?service_name=${enc(service)}`, { signal }),
    [service, issueId],
  );
  const data = load.data;
  if (!data) return <PageShell title="Issue" load={load} loadingWhat="Loading issue" />;
  const { issue } = data;
  const peak = Math.max(1, ...data.byDay.map((d) => d.occurrences));
  return (
    <PageShell
      crumbs={
        <>
          <Link href={`/issues?service=${enc(service)}`}>Issues</Link> / {service}
        </>
      }
      title={issue.title}
    >
      <Facts
        inline
        of={[
          ["Severity", <Badge kind={issue.severity}>{issue.severity}</Badge>],
          ["Occurrences", num(issue.occurrences)],
          ["Sessions", num(issue.affectedSessions)],
          ["First seen", when(issue.firstSeenAt)],
          ["Last seen", when(issue.lastSeenAt)],
          ["Detector", issue.detector],
        ]}
      />
      <div class="two">
        <Panel headingId="byday-h" title="Occurrences by day">
          <table class="list compact">
            <thead>
              <tr>
                <th scope="col">Day</th>
                <th scope="col">Occurrences</th>
                <th scope="col" class="n">
                  Sessions
                </th>
              </tr>
            </thead>
            <tbody>
              {data.byDay.map((d) => (
                <tr key={d.date}>
                  <td>{d.date}</td>
                  <td>
                    <span class="bar" style={{ width: `${(d.occurrences / peak) * 100}%` }} aria-hidden="true" />{" "}
                    {num(d.occurrences)}
                  </td>
                  <td class="n">{num(d.sessions)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </Panel>
        <Panel headingId="top-h" title="Affected sessions">
          <ul class="plain">
            {data.topSessions.map((s) => (
              <li key={s.sessionId}>
                <Link href={`/sessions/${enc(service)}/${enc(s.sessionId)}`}>{s.sessionId}</Link>{" "}
                <span class="muted small">
                  {num(s.occurrences)}× · last {when(s.lastOccurredAt)}
                </span>
              </li>
            ))}
          </ul>
          <h2>By environment</h2>
          <ul class="plain">
            {data.byEnvironment.map((e) => (
              <li key={e.environment}>
                {e.environment ?? "—"}: {num(e.occurrences)}
              </li>
            ))}
          </ul>
        </Panel>
      </div>
    </PageShell>
  );
}
