import { useState } from "preact/hooks";
import { api, isAdmin, type Me } from "../api";
import { when } from "../format";
import { ActionError, Badge, ShownOnce, useAction, useLoad } from "../ui";
import { KeysSection } from "./OrgKeys";

const ROLES = ["viewer", "member", "admin", "owner"] as const;

export type { Project } from "./OrgKeys";
import type { Project } from "./OrgKeys";
import { Field } from "../components/form";
import { Facts } from "../components/Facts";
import { PageShell } from "../components/PageShell";
import { column, DataTable } from "../components/DataTable";
import { LoadStatus, Panel } from "../components/Panel";

/**
 * Organization settings (docs/dashboard.md): plan and entitlement (set by the provider),
 * projects and services, telemetry keys and DSNs, members. Every role may look; admins and
 * owners change things; the API answers 403 to anyone else anyway.
 */
export function OrganizationPage({ me }: { me: Me }) {
  const org = useLoad((signal) => api("/organization", { signal }), []);
  const admin = isAdmin(me);
  const o = org.data;
  return (
    <PageShell title="Organization" load={org} loadingWhat="Loading organization">
      {o && (
        <>
          <Panel headingId="org-h" title={o.name}>
            <Facts
              inline
              of={[
                ["Plan", o.plan],
                ["Outbound webhooks", o.webhooksEnabled ? "enabled" : "not enabled"],
                ["Retention", o.retentionDays ? `${o.retentionDays} days` : "the plan's default"],
              ]}
            />
            <p class="muted small">
              The plan, the webhook entitlement and retention are set by your provider (the operator's admin CLI).
            </p>
          </Panel>
          <ProjectsSection projects={o.projects} admin={admin} reload={org.reload} />
          {admin ? (
            <KeysSection projects={o.projects} />
          ) : (
            <Panel headingId="keys-h" title="Telemetry keys and DSNs">
              <p class="muted">Keys and DSNs are managed by the admins and owners of {o.name}.</p>
            </Panel>
          )}
          <MembersSection me={me} projects={o.projects} admin={admin} />
        </>
      )}
    </PageShell>
  );
}

function ProjectsSection({ projects, admin, reload }: { projects: Project[]; admin: boolean; reload: () => void }) {
  const action = useAction();
  const submit = (path: string, body: (f: FormData) => unknown) => async (e: Event) => {
    e.preventDefault();
    const form = e.target as HTMLFormElement;
    if (await action.run(() => api(path, { body: body(new FormData(form)) }))) {
      form.reset();
      reload();
    }
  };
  return (
    <Panel headingId="projects-h" title="Projects and services">
      <ul class="plain">
        {projects.map((p) => (
          <li key={p.id}>
            <strong>{p.name}</strong> {p.isDefault && <Badge kind="low">default</Badge>}
            <div class="muted small">
              {p.services.length ? p.services.join(", ") : "no services yet"}
              {p.isDefault && " · a service first seen by ingestion lands here"}
            </div>
          </li>
        ))}
      </ul>
      {admin && (
        <div class="two">
          <form class="form" onSubmit={submit("/organization/projects", (f) => ({ name: f.get("name") }))}>
            <Field label="New project name">
              <input name="name" required maxLength={200} />
            </Field>
            <button type="submit" disabled={action.busy}>
              Create project
            </button>
          </form>
          <form
            class="form"
            onSubmit={submit("/organization/services", (f) => ({
              name: f.get("name"),
              projectId: f.get("projectId"),
            }))}
          >
            <Field label="New service name">
              <input name="name" required maxLength={200} />
            </Field>
            <Field label="In project">
              <select name="projectId">
                {projects.map((p) => (
                  <option key={p.id} value={p.id}>
                    {p.name}
                  </option>
                ))}
              </select>
            </Field>
            <button type="submit" disabled={action.busy}>
              Create service
            </button>
          </form>
        </div>
      )}
      <ActionError error={action.error} />
    </Panel>
  );
}

function ProjectChecks({ projects, selected, legend }: { projects: Project[]; selected: string[]; legend: string }) {
  return (
    <fieldset class="checks">
      <legend>{legend}</legend>
      {projects.map((p) => (
        <label key={p.id} class="check">
          <input type="checkbox" name="projectIds" value={p.id} defaultChecked={selected.includes(p.id)} /> {p.name}
        </label>
      ))}
    </fieldset>
  );
}

function MembersSection({ me, projects, admin }: { me: Me; projects: Project[]; admin: boolean }) {
  const members = useLoad((signal) => api("/organization/members", { signal }), []);
  const action = useAction();
  const [link, setLink] = useState<string | null>(null);
  const roles = ROLES.filter((r) => r !== "owner" || me.user.role === "owner");
  const projectName = (id: string) => projects.find((p) => p.id === id)?.name ?? id;
  const showLink = (r: { path: string } | undefined) => r && setLink(`${location.origin}${r.path}`);
  const invite = async (e: Event) => {
    e.preventDefault();
    const form = e.target as HTMLFormElement;
    const f = new FormData(form);
    const r = await action.run(() =>
      api("/organization/members", {
        body: { email: f.get("email"), role: f.get("role"), projectIds: f.getAll("projectIds") },
      }),
    );
    if (r) {
      form.reset();
      showLink(r);
      members.reload();
    }
  };
  const change = async (id: string, body: unknown) => {
    if (await action.run(() => api(`/organization/members/${id}`, { method: "PATCH", body }))) members.reload();
  };
  const deprovision = async (id: string, email: string) => {
    if (!confirm(`Deprovision ${email}? Their sign-ins and platform keys stop working at once.`)) return;
    if (await action.run(() => api(`/organization/members/${id}/deprovision`, { method: "POST" }))) members.reload();
  };
  const reinvite = async (id: string) =>
    showLink(await action.run(() => api(`/organization/members/${id}/invitation`, { method: "POST" })));
  const list: any[] = members.data?.members ?? [];
  return (
    <Panel headingId="members-h" title="Members">
      {link && (
        <ShownOnce label="Invitation link" value={link} testId="invitation-link" onDone={() => setLink(null)}>
          <p class="muted small">Send it to the new member: it is valid for 7 days, once.</p>
        </ShownOnce>
      )}
      <LoadStatus load={members} what="Loading members" />
      <MembersTable
        list={list}
        me={me}
        admin={admin}
        roles={roles}
        change={change}
        projectName={projectName}
        projects={projects}
        deprovision={deprovision}
        reinvite={reinvite}
      />
      <ActionError error={action.error} />
      {admin && (
        <form class="form" onSubmit={invite} aria-labelledby="invite-h">
          <h3 id="invite-h">Invite a member</h3>
          <Field label="Email of the new member">
            <input name="email" type="email" required maxLength={320} />
          </Field>
          <Field label="Role of the new member">
            <select name="role" defaultValue="member">
              {roles.map((r) => (
                <option key={r} value={r}>
                  {r}
                </option>
              ))}
            </select>
          </Field>
          <ProjectChecks projects={projects} selected={[]} legend="Projects (viewers and members see only these)" />
          <button type="submit" disabled={action.busy}>
            Invite
          </button>
        </form>
      )}
    </Panel>
  );
}

/** What the members' cells need: who is looking, and the page's actions on a member. */
interface MemberActions {
  me: Me;
  roles: readonly string[];
  change: (id: string, body: unknown) => void;
  projectName: (id: string) => string;
  projects: Project[];
  deprovision: (id: string, email: string) => void;
  reinvite: (id: string) => void;
}

/** The members: role and projects editable in place (by who may), a new invitation link, deprovisioning. */
function MembersTable({ list, admin, ...a }: MemberActions & { list: any[]; admin: boolean }) {
  // Editable by an admin: not a deprovisioned member, not yourself, and an owner only by an owner.
  const editable = (u: any) =>
    admin &&
    u.state !== "deprovisioned" &&
    u.id !== a.me.user.id &&
    !(u.role === "owner" && a.me.user.role !== "owner");
  const columns = [
    column("Email", (u: any) => u.email),
    column("Role", (u: any) => (editable(u) ? <RoleSelect member={u} {...a} /> : u.role)),
    column("Projects", (u: any) => <MemberProjects member={u} editable={editable(u)} {...a} />),
    column("State", (u: any) => (
      <>
        <Badge kind={u.state === "active" ? "complete" : u.state === "deprovisioned" ? "problem" : "partial"}>
          {u.state}
        </Badge>
        <div class="muted small">since {when(u.createdAt)}</div>
      </>
    )),
    ...(admin
      ? [
          column("Actions", (u: any) => (editable(u) ? <MemberButtons member={u} {...a} /> : null), {
            hiddenHeader: true,
          }),
        ]
      : []),
  ];
  return (
    <DataTable
      caption="Members"
      compact
      stacked
      columns={columns}
      rows={list}
      rowKey={(u) => u.id}
      rowProps={(u) => ({ "data-member": u.email })}
    />
  );
}

function RoleSelect({ member: u, roles, change }: MemberActions & { member: any }) {
  return (
    <select
      aria-label={`Role of ${u.email}`}
      value={u.role}
      onChange={(e) => change(u.id, { role: (e.target as HTMLSelectElement).value })}
    >
      {roles.map((r) => (
        <option key={r} value={r}>
          {r}
        </option>
      ))}
    </select>
  );
}

/** A member's projects (all, by role, for an admin or owner), changed in place where editable. */
function MemberProjects({
  member: u,
  editable,
  projectName,
  projects,
  change,
}: MemberActions & { member: any; editable: boolean }) {
  const byRole = u.role === "admin" || u.role === "owner";
  return (
    <>
      {byRole ? "all (by role)" : u.projectIds.map(projectName).join(", ") || "none"}
      {editable && !byRole && (
        <details>
          <summary>Change projects</summary>
          <form
            onSubmit={(e) => {
              e.preventDefault();
              change(u.id, { projectIds: new FormData(e.target as HTMLFormElement).getAll("projectIds") });
            }}
          >
            <ProjectChecks projects={projects} selected={u.projectIds} legend={`Projects of ${u.email}`} />
            <button type="submit" class="small">
              Save projects
            </button>
          </form>
        </details>
      )}
    </>
  );
}

function MemberButtons({ member: u, reinvite, deprovision }: MemberActions & { member: any }) {
  return (
    <span class="actions">
      {u.state !== "active" && (
        <button type="button" class="small" onClick={() => reinvite(u.id)}>
          New invitation link
        </button>
      )}
      <button
        type="button"
        class="small danger"
        onClick={() => deprovision(u.id, u.email)}
        aria-label={`Deprovision ${u.email}`}
      >
        Deprovision
      </button>
    </span>
  );
}
