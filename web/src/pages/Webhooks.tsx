import { useEffect, useState } from "preact/hooks";
import { Link, useLocation } from "wouter-preact";
import { api, enc, type Me } from "../api";
import type {
  Attempt,
  Attempts,
  CreatedSubscription,
  RotatedSubscription,
  Subscription,
  Subscriptions,
} from "../api-types";
import { Panel } from "../components/Panel";
import { column, DataTable } from "../components/DataTable";
import { Field, Outcome, ServiceSelect } from "../components/form";
import { PageShell } from "../components/PageShell";
import { ms, when } from "../format";
import { Badge, ErrorBox, ShownOnce, useAction, useLoad } from "../ui";

const EVENT_TYPES = ["session.matured", "trace.matured", "monitor.triggered", "monitor.resolved"];

function SecretOnce({ secret, onDone }: { secret: string; onDone: () => void }) {
  return <ShownOnce label="Signing secret" value={secret} testId="secret" onDone={onDone} />;
}

function EventTypeChecks({ selected }: { selected: string[] }) {
  return (
    <fieldset class="checks">
      <legend>Events</legend>
      {EVENT_TYPES.map((e) => (
        <label key={e} class="check">
          <input type="checkbox" name="event_types" value={e} defaultChecked={selected.includes(e)} /> {e}
        </label>
      ))}
    </fieldset>
  );
}

/** A subscription's state: enabled, or disabled with the platform's reason. */
function SubscriptionState({ s }: { s: Subscription }) {
  return s.enabled ? (
    <Badge kind="complete">enabled</Badge>
  ) : (
    <Badge kind="problem">disabled{s.disabled_reason ? `: ${s.disabled_reason}` : ""}</Badge>
  );
}

export function WebhooksPage({ me }: { me: Me }) {
  const list = useLoad((signal) => api<Subscriptions>("/webhooks", { signal }), []);
  const [secret, setSecret] = useState<string | null>(null);
  const action = useAction();
  const serviceName = (id: string) => me.services.find((s) => s.id === id)?.name ?? id;
  const create = async (e: Event) => {
    e.preventDefault();
    const form = new FormData(e.target as HTMLFormElement);
    const created = await action.run(() =>
      api<CreatedSubscription>("/webhooks", {
        body: {
          trace_service_id: form.get("service"),
          name: form.get("name"),
          url: form.get("url"),
          event_types: form.getAll("event_types"),
        },
      }),
    );
    if (created) {
      (e.target as HTMLFormElement).reset();
      setSecret(created.secret);
      list.reload();
    }
  };
  const subs = list.data?.data ?? [];
  return (
    <PageShell
      title="Webhooks"
      load={list}
      loadingWhat="Loading subscriptions"
      head={
        <>
          {!me.tenant.webhooksEnabled && (
            <p class="notice">
              Outbound webhooks are not enabled for {me.tenant.name}; ask your provider to turn them on.
            </p>
          )}
          {secret && <SecretOnce secret={secret} onDone={() => setSecret(null)} />}
        </>
      }
    >
      {list.data && (
        <DataTable
          caption="Webhook subscriptions"
          rows={subs}
          rowKey={(s) => s.id}
          empty="No subscriptions yet. Create one below to receive a signed POST when a session or trace has settled."
          columns={[
            column("Name", (s: Subscription) => <Link href={`/webhooks/${s.id}`}>{s.name}</Link>),
            column("Service", (s: Subscription) => serviceName(s.trace_service_id)),
            column("URL", (s: Subscription) => s.url, { cellClass: "url" }),
            column("Events", (s: Subscription) => s.event_types.join(", ")),
            column("State", (s: Subscription) => <SubscriptionState s={s} />),
            column("Last delivery", (s: Subscription) => (
              <>
                {s.last_delivery_status ?? "—"}
                {s.consecutive_failures > 0 && <span class="muted small"> ({s.consecutive_failures} failures)</span>}
              </>
            )),
          ]}
        />
      )}
      <form class="panel form" onSubmit={create} aria-labelledby="new-webhook">
        <h2 id="new-webhook">New subscription</h2>
        <Field label="Service">
          <ServiceSelect me={me} />
        </Field>
        <Field label="Name">
          <input name="name" required maxLength={200} />
        </Field>
        <Field label="URL (https)">
          <input name="url" type="url" required placeholder="https://example.com/hooks/cellar" />
        </Field>
        <EventTypeChecks selected={["session.matured", "trace.matured"]} />
        <Outcome error={action.error} />
        <button type="submit" disabled={action.busy}>
          Create subscription
        </button>
      </form>
    </PageShell>
  );
}

export function WebhookPage({ me, id }: { me: Me; id: string }) {
  const sub = useLoad((signal) => api<Subscription>(`/webhooks/${enc(id)}`, { signal }), [id]);
  const log = useLoad((signal) => api<Attempts>(`/webhooks/${enc(id)}/deliveries`, { signal }), [id]);
  const [secret, setSecret] = useState<string | null>(null);
  const [notice, setNotice] = useState<string | null>(null);
  const [, navigate] = useLocation();
  const action = useAction();
  const attempts = log.data?.data ?? [];
  // Deliveries still pending: look again shortly (retries run in the dispatcher).
  useEffect(() => {
    if (!attempts.some((a) => a.delivery_status === "pending") && !notice) return;
    const t = setTimeout(log.reload, 2000);
    return () => clearTimeout(t);
  }, [log.data, notice]);

  if (!sub.data) return <PageShell title="Webhook" load={sub} />;
  const s = sub.data;
  const save = async (e: Event) => {
    e.preventDefault();
    const form = new FormData(e.target as HTMLFormElement);
    const r = await action.run(() =>
      api(`/webhooks/${enc(id)}`, {
        method: "PUT",
        body: { name: form.get("name"), url: form.get("url"), event_types: form.getAll("event_types") },
      }),
    );
    if (r) {
      setNotice("Saved.");
      sub.reload();
    }
  };
  const post =
    <R,>(path: string, done: (r: R) => void) =>
    async () => {
      const r = await action.run(() => api<R>(`/webhooks/${enc(id)}${path}`, { method: "POST" }));
      if (r !== undefined) done(r);
    };
  const remove = async () => {
    if (!confirm(`Delete subscription "${s.name}" and its delivery log?`)) return;
    const r = await action.run(() => api(`/webhooks/${enc(id)}`, { method: "DELETE" }).then(() => true));
    if (r) navigate("/webhooks");
  };
  // The subscription's actions, in the order shown: enable or disable, test, rotate, delete.
  const buttons: Array<[string, () => void, boolean?]> = [
    s.enabled
      ? ["Disable", post("/disable", () => (setNotice("Disabled."), sub.reload()))]
      : ["Enable", post("/enable", () => (setNotice("Enabled."), sub.reload()))],
    [
      "Send test event",
      post("/test", () => (setNotice("Test event sent; it appears in the log below."), log.reload())),
    ],
    ["Rotate secret", post<RotatedSubscription>("/rotate-secret", (r) => (setSecret(r.secret), sub.reload()))],
    ["Delete", remove, true],
  ];
  const serviceName = me.services.find((x) => x.id === s.trace_service_id)?.name ?? s.trace_service_id;
  return (
    <>
      <p class="crumbs">
        <Link href="/webhooks">Webhooks</Link> / {serviceName}
      </p>
      <PageShell title={s.name}>
        {secret && <SecretOnce secret={secret} onDone={() => setSecret(null)} />}
        <Outcome notice={notice} />
        <Outcome error={action.error} />
        <div class="actions">
          <span>
            <SubscriptionState s={s} />
          </span>
          {buttons.map(([text, onClick, danger]) => (
            <button
              key={text}
              type="button"
              class={danger ? "danger" : undefined}
              disabled={action.busy}
              onClick={onClick}
            >
              {text}
            </button>
          ))}
        </div>
        <div class="two">
          <SubscriptionSettings s={s} busy={action.busy} onSubmit={save} />
          <DeliveryLog
            log={log}
            busy={action.busy}
            retry={(deliveryId) =>
              post(`/deliveries/${enc(deliveryId)}/retry`, () => {
                setNotice("Retry queued.");
                log.reload();
              })()
            }
          />
        </div>
      </PageShell>
    </>
  );
}

/** The subscription's latest attempts, newest first, each finished delivery with a retry button. */
function DeliveryLog({
  log,
  busy,
  retry,
}: {
  log: ReturnType<typeof useLoad<Attempts>>;
  busy: boolean;
  retry: (deliveryId: string) => void;
}) {
  const attempts = log.data?.data ?? [];
  return (
    <Panel
      headingId="log-h"
      title="Delivery log"
      status={
        <button type="button" class="small" onClick={log.reload}>
          Refresh
        </button>
      }
    >
      <ErrorBox error={log.error} />
      {log.data && (
        <DataTable
          compact
          label="Delivery attempts, newest first"
          rows={attempts}
          rowKey={(a) => a.id}
          rowProps={(a) => ({ "data-delivery": a.delivery_id })}
          empty="No deliveries yet. Send a test event to see one here."
          columns={[
            column("When", (a: Attempt) => when(a.attempted_at)),
            column("Event", (a: Attempt) => a.event_type),
            column("Attempt", (a: Attempt) => a.attempt, { numeric: true }),
            column("Response", (a: Attempt) => (
              <>
                {a.status_code ?? "no response"}{" "}
                <span class="muted small">
                  {ms(a.duration_ms)}
                  {a.error ? ` · ${a.error}` : ""}
                </span>
              </>
            )),
            column("Delivery", (a: Attempt) => (
              <Badge
                kind={
                  a.delivery_status === "delivered"
                    ? "complete"
                    : a.delivery_status === "pending"
                      ? "processing"
                      : "problem"
                }
              >
                {a.delivery_status}
              </Badge>
            )),
            {
              key: "Actions",
              header: "Actions",
              hiddenHeader: true,
              cell: (a) =>
                a.delivery_status !== "pending" && (
                  <button
                    type="button"
                    class="small"
                    disabled={busy}
                    aria-label={`Retry delivery ${a.delivery_id}`}
                    onClick={() => retry(a.delivery_id)}
                  >
                    Retry
                  </button>
                ),
            },
          ]}
        />
      )}
    </Panel>
  );
}

/** The subscription's name, url and event types, saved with PUT. */
function SubscriptionSettings({ s, busy, onSubmit }: { s: Subscription; busy: boolean; onSubmit: (e: Event) => void }) {
  return (
    <form class="panel form" onSubmit={onSubmit} aria-labelledby="edit-h">
      <h2 id="edit-h">Settings</h2>
      <Field label="Name">
        <input name="name" required maxLength={200} defaultValue={s.name} />
      </Field>
      <Field label="URL (https)">
        <input name="url" type="url" required defaultValue={s.url} />
      </Field>
      <EventTypeChecks selected={s.event_types} />
      <button type="submit" disabled={busy}>
        Save
      </button>
    </form>
  );
}
