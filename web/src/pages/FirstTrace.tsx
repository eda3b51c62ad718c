import { useEffect, useState } from "preact/hooks";
import { Link } from "wouter-preact";
import { api, ApiError, enc, isAdmin, type Me } from "../api";
import { CopyButton, useAction } from "../ui";
import { Field, Outcome } from "../components/form";
import { PageShell } from "../components/PageShell";
import { Panel } from "../components/Panel";
import { snippets } from "./first-trace-snippets";

/** The endpoint and service a DSN carries (docs/sdks.md), or nulls for a legacy DSN. */
export function dsnParts(dsn: string): { endpoint: string | null; service: string | null } {
  const body = dsn.replace(/^svc-ing-[sc]-/, "");
  const dot = body.lastIndexOf(".");
  if (dot < 0) return { endpoint: null, service: null };
  try {
    const json = atob(body.slice(0, dot).replace(/-/g, "+").replace(/_/g, "/"));
    const config = JSON.parse(new TextDecoder().decode(Uint8Array.from(json, (c) => c.charCodeAt(0))));
    return { endpoint: config.e ?? null, service: config.s ?? null };
  } catch {
    return { endpoint: null, service: null };
  }
}

function Snippet({ id, title, code }: { id: string; title: string; code: string }) {
  return (
    <Panel
      headingId={`${id}-h`}
      title={title}
      status={
        <span>
          <CopyButton value={code} label={`Copy the ${title} snippet`} />
        </span>
      }
    >
      <pre class="code" tabIndex={0} data-testid={`snippet-${id}`}>
        {code}
      </pre>
    </Panel>
  );
}

/**
 * Polls a cheap read (the newest session of the service, no count) every 2 s until one exists;
 * the service itself appears with its first trace, so 404 means "not yet".
 */
function useFirstSession(service: string | null) {
  const [found, setFound] = useState<string | null>(null);
  useEffect(() => {
    if (!service) return;
    let stopped = false;
    let timer: ReturnType<typeof setTimeout>;
    const poll = async () => {
      try {
        const r = await api("/telemetry/otel/sessions/filtered", {
          body: { serviceName: service, limit: 1, skipTotalCount: true },
        });
        const first = r?.sessions?.[0]?.sessionId;
        if (first && !stopped) return setFound(first);
      } catch (err) {
        if (!(err instanceof ApiError) || (err.status !== 404 && err.status !== 403)) console.warn(err);
      }
      if (!stopped) timer = setTimeout(poll, 2000);
    };
    poll();
    return () => {
      stopped = true;
      clearTimeout(timer);
    };
  }, [service]);
  return found;
}

/** "Send your first trace": a server DSN, copy-paste snippets, and a live wait for the session. */
export function FirstTracePage({ me }: { me: Me }) {
  const action = useAction();
  const [dsn, setDsn] = useState<{ key: string; service: string } | null>(null);
  const found = useFirstSession(dsn?.service ?? null);
  const create = async (e: Event) => {
    e.preventDefault();
    const service = String(new FormData(e.target as HTMLFormElement).get("service") ?? "").trim();
    const r = await action.run(() =>
      api("/organization/keys", { body: { kind: "dsn-server", serviceName: service, name: "first trace" } }),
    );
    if (r) setDsn({ key: r.key, service });
  };
  const parts = dsn ? dsnParts(dsn.key) : null;
  const endpoint = parts?.endpoint ?? "http://<your ingest host>:3100";
  const code = dsn && snippets(dsn.key, dsn.service, endpoint);
  return (
    <PageShell title="Send your first trace">
      {!isAdmin(me) ? (
        <p>An admin or owner of your organization creates DSNs; ask one for a server DSN of your service.</p>
      ) : !dsn ? (
        <form class="panel form" onSubmit={create} aria-labelledby="dsn-h">
          <h2 id="dsn-h">1. A DSN for your service</h2>
          <p class="muted">
            A server DSN is the one setting an SDK needs: it carries the ingest endpoint and the service name. Keep it
            secret (use a client DSN in browsers: Organization, Telemetry keys and DSNs).
          </p>
          <Field label="Service name">
            <input name="service" defaultValue="my-app" required maxLength={200} />
          </Field>
          <Outcome error={action.error} />
          <button type="submit" disabled={action.busy}>
            Create a server DSN
          </button>
        </form>
      ) : (
        <>
          <section class="secret" aria-labelledby="dsn-h">
            <h2 id="dsn-h">Your server DSN for {dsn.service}</h2>
            <p>Copy it now: it is shown only here (you can always create another one).</p>
            <pre class="code" tabIndex={0} data-testid="first-dsn">
              {dsn.key}
            </pre>
            <CopyButton value={dsn.key} label="Copy the DSN" />
            {!parts?.endpoint && (
              <p class="notice">
                This platform has no INGEST_PUBLIC_URL, so the DSN does not carry the ingest endpoint: give the SDKs
                their <code>endpoint</code> setting.
              </p>
            )}
          </section>
          <h2>2. Send a trace with it</h2>
          <Snippet id="typescript" title="TypeScript SDK" code={code!.typescript} />
          <Snippet id="python" title="Python SDK" code={code!.python} />
          <Snippet id="curl" title="curl" code={code!.curl} />
          <Snippet id="otlp" title="OpenTelemetry environment" code={code!.otlp} />
          <Panel headingId="wait-h" title="3. Your first session">
            <p role="status" aria-live="polite">
              {found ? (
                <>
                  It arrived: <Link href={`/sessions/${enc(dsn.service)}/${enc(found)}`}>open session {found}</Link>
                </>
              ) : (
                <>Waiting for the first trace of {dsn.service}… (checking every 2 seconds)</>
              )}
            </p>
          </Panel>
        </>
      )}
    </PageShell>
  );
}
