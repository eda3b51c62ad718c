import { useState } from "preact/hooks";
import { api } from "../api";
import { when } from "../format";
import { ActionError, Badge, ShownOnce, useAction, useLoad } from "../ui";
import { column, DataTable } from "../components/DataTable";
import { LoadStatus, Panel } from "../components/Panel";
import { Field, Options } from "../components/form";

/** A project of the organization, as GET /organization lists it. */
export interface Project {
  id: string;
  name: string;
  isDefault: boolean;
  services: string[];
}

const KIND_LABEL: Record<string, string> = {
  telemetry: "Telemetry key (any service)",
  "dsn-server": "Server DSN",
  "dsn-client": "Client DSN (browsers)",
};

/**
 * The exact-origin rule the ingest host applies (shared/admin/tenancy.ts `originProblem`, checked
 * again by the server): scheme, host and optional port, nothing else.
 */
export function originProblem(origin: string): string | null {
  try {
    const u = new URL(origin);
    if (u.protocol !== "https:" && u.protocol !== "http:") return `${origin}: must start with https:// (or http://)`;
    if (u.origin !== origin) return `${origin}: not an exact origin; did you mean ${u.origin}?`;
    return null;
  } catch {
    return `${origin}: not an origin like https://app.example.com`;
  }
}

const originsOf = (text: string) =>
  text
    .split(/[\s,]+/)
    .map((s) => s.trim())
    .filter(Boolean);

function OriginsField({ id, value, label }: { id: string; value?: string[]; label: string }) {
  const [problems, setProblems] = useState<string[]>([]);
  return (
    <div class="field">
      <label for={id}>{label}</label>
      <textarea
        id={id}
        name="allowedOrigins"
        rows={3}
        aria-describedby={`${id}-rule`}
        defaultValue={(value ?? []).join("\n")}
        placeholder="https://app.example.com"
        onInput={(e) =>
          setProblems(
            originsOf((e.target as HTMLTextAreaElement).value)
              .map(originProblem)
              .filter((p): p is string => !!p),
          )
        }
      />
      <span id={`${id}-rule`} class="muted small">
        One per line. A browser's <code>Origin</code> header must equal one of them exactly: scheme, host and port (
        <code>https://app.example.com</code>, <code>http://localhost:5173</code>), no path, no trailing slash, no
        wildcard. Empty: any origin.
      </span>
      {problems.map((p) => (
        <span key={p} class="error" role="alert">
          {p}
        </span>
      ))}
    </div>
  );
}

export function KeysSection({ projects }: { projects: Project[] }) {
  const keys = useLoad((signal) => api("/organization/keys", { signal }), []);
  const action = useAction();
  const [created, setCreated] = useState<{ key: string; kind: string } | null>(null);
  const [kind, setKind] = useState("dsn-server");
  const services = [...new Set(projects.flatMap((p) => p.services))].sort();
  const create = async (e: Event) => {
    e.preventDefault();
    const form = e.target as HTMLFormElement;
    const f = new FormData(form);
    const body: Record<string, unknown> = { kind, name: f.get("name") || undefined };
    if (kind !== "telemetry") body.serviceName = f.get("serviceName");
    if (kind === "dsn-client") body.allowedOrigins = originsOf(String(f.get("allowedOrigins") ?? ""));
    const r = await action.run(() => api("/organization/keys", { body }));
    if (r) {
      form.reset();
      setCreated({ key: r.key, kind });
      keys.reload();
    }
  };
  const patch = async (id: string, body: unknown) => {
    if (await action.run(() => api(`/organization/keys/${id}`, { method: "PATCH", body }))) keys.reload();
  };
  const revoke = async (id: string, label: string) => {
    if (!confirm(`Revoke ${label}? Programs sending with it get 401 within seconds.`)) return;
    // 204 without a body: success is the call not throwing, not a truthy answer (issue 37).
    const done = await action.run(() => api(`/organization/keys/${id}`, { method: "DELETE" }).then(() => true));
    if (done) keys.reload();
  };
  const list: any[] = keys.data?.keys ?? [];
  return (
    <Panel headingId="keys-h" title="Telemetry keys and DSNs">
      <p class="muted">
        What your apps send with (<code>Authorization: Bearer …</code>). A DSN is bound to one service; a server DSN is
        for backends, a client DSN is safe in a browser bundle and can be limited to your site's origins.
      </p>
      {created && (
        <ShownOnce
          label={created.kind === "telemetry" ? "Telemetry key" : "DSN"}
          value={created.key}
          testId="new-dsn"
          onDone={() => setCreated(null)}
        />
      )}
      <LoadStatus load={keys} what="Loading keys" isEmpty={() => !list.length} empty="No telemetry keys or DSNs yet." />
      <KeyTables list={list} busy={action.busy} patch={patch} revoke={revoke} />
      <ActionError error={action.error} />
      <NewKeyForm kind={kind} setKind={setKind} services={services} busy={action.busy} onSubmit={create} />
    </Panel>
  );
}

/** The keys and DSNs, a table per service (telemetry keys, for every service, apart); rename, origins and revoke per row. */
function KeyTables({
  list,
  patch,
  revoke,
}: {
  list: any[];
  busy: boolean;
  patch: (id: string, body: unknown) => void;
  revoke: (id: string, label: string) => void;
}) {
  const groups = [...new Set(list.map((k) => k.serviceName ?? ""))].sort();
  const columns = [
    column("Name", (k: any) => (
      <>
        {k.name ?? <span class="muted">unnamed</span>}
        <div>
          <code>{k.prefix}…</code>
        </div>
      </>
    )),
    column("Kind", (k: any) => (
      <>
        {KIND_LABEL[k.kind]}
        {k.revokedAt && <Badge kind="problem">revoked {when(k.revokedAt)}</Badge>}
      </>
    )),
    column("Allowed origins", (k: any) =>
      k.kind !== "dsn-client" ? "—" : k.allowedOrigins.length ? k.allowedOrigins.join(" ") : "any",
    ),
    column("Created", (k: any) => when(k.createdAt)),
    column("Last used", (k: any) => (k.lastUsedAt ? when(k.lastUsedAt) : "never")),
    column("Actions", (k: any) => (k.revokedAt ? null : <KeyActions k={k} patch={patch} revoke={revoke} />), {
      hiddenHeader: true,
    }),
  ];
  return (
    <>
      {groups.map((g) => (
        <DataTable
          key={g || "-"}
          caption={g ? `Service ${g}` : "Every service (telemetry keys)"}
          captionShown
          compact
          stacked
          columns={columns}
          rows={list.filter((k) => (k.serviceName ?? "") === g)}
          rowKey={(k) => k.id}
          rowProps={(k) => ({ "data-key": k.id })}
        />
      ))}
    </>
  );
}

/** A live key's row actions: edit its name (and a client DSN's origins) in place, or revoke it. */
function KeyActions({
  k,
  patch,
  revoke,
}: {
  k: any;
  patch: (id: string, body: unknown) => void;
  revoke: (id: string, label: string) => void;
}) {
  const label = `${k.name ?? KIND_LABEL[k.kind]} (${k.prefix}…)`;
  return (
    <>
      <details>
        <summary>Edit</summary>
        <form
          class="form"
          onSubmit={(e) => {
            e.preventDefault();
            const f = new FormData(e.target as HTMLFormElement);
            patch(k.id, {
              name: String(f.get("name") ?? "") || null,
              ...(k.kind === "dsn-client" && { allowedOrigins: originsOf(String(f.get("allowedOrigins") ?? "")) }),
            });
          }}
        >
          <Field label={<>Name of {k.prefix}…</>}>
            <input name="name" defaultValue={k.name ?? ""} maxLength={200} />
          </Field>
          {k.kind === "dsn-client" && (
            <OriginsField id={`origins-${k.id}`} value={k.allowedOrigins} label={`Allowed origins of ${k.prefix}…`} />
          )}
          <button type="submit" class="small">
            Save {k.prefix}…
          </button>
        </form>
      </details>
      <button type="button" class="small danger" onClick={() => revoke(k.id, label)} aria-label={`Revoke ${label}`}>
        Revoke
      </button>
    </>
  );
}

/** A new key or DSN: its kind, then the service (DSNs), a name and the allowed origins (client DSNs). */
function NewKeyForm({
  kind,
  setKind,
  services,
  busy,
  onSubmit,
}: {
  kind: string;
  setKind: (kind: string) => void;
  services: string[];
  busy: boolean;
  onSubmit: (e: Event) => void;
}) {
  return (
    <form class="form" onSubmit={onSubmit} aria-labelledby="new-key-h">
      <h3 id="new-key-h">New key or DSN</h3>
      <Field label="Kind">
        <select name="kind" value={kind} onChange={(e) => setKind((e.target as HTMLSelectElement).value)}>
          <Options of={Object.entries(KIND_LABEL)} />
        </select>
      </Field>
      {kind !== "telemetry" && (
        <Field label="Service (an existing one, or a new name: ingestion creates it)">
          <input name="serviceName" list="known-services" required maxLength={200} />
          <datalist id="known-services">
            {services.map((s) => (
              <option key={s} value={s} />
            ))}
          </datalist>
        </Field>
      )}
      <Field label="Name (what it is for)">
        <input name="name" maxLength={200} />
      </Field>
      {kind === "dsn-client" && <OriginsField id="new-origins" label="Allowed origins" />}
      <button type="submit" disabled={busy}>
        Create
      </button>
    </form>
  );
}
