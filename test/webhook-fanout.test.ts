// The fan-out of a batch of MATURED events (issue 36 part 3): which subscriptions get a
// delivery, the stored body byte for byte (serialized once per event, around ids drawn
// together), what a replay returns, and an event matched by many subscriptions.
import { beforeAll, expect, test } from "bun:test";
import { bootstrapTenant, createService } from "@cellar/shared/admin/tenancy";
import type { MaturedMessage } from "@cellar/shared/payloads";
import { deliveryBody } from "@cellar/shared/webhooks/deliveries";
import { fanOut } from "../apps/dispatcher/src/fanout";
import { useTestDatabase } from "./helpers/test-database";

const db = useTestDatabase();
const now = new Date("2026-11-28T10:00:00Z");
const deps = () => ({ sql: db.database.sql, now: () => now, attemptLeaseMs: 30_000 });
let entitled: { tenantId: string; serviceId: string; otherServiceId: string };
let unentitled: { tenantId: string; serviceId: string };

beforeAll(async () => {
  const t = await bootstrapTenant(db.database.db, { name: "fan", webhooks: true });
  entitled = {
    tenantId: t.tenantId,
    serviceId: (await createService(db.database.db, { tenantId: t.tenantId, name: "svc" })).id,
    otherServiceId: (await createService(db.database.db, { tenantId: t.tenantId, name: "svc-2" })).id,
  };
  const u = await bootstrapTenant(db.database.db, { name: "no-hooks", webhooks: false });
  unentitled = {
    tenantId: u.tenantId,
    serviceId: (await createService(db.database.db, { tenantId: u.tenantId, name: "svc" })).id,
  };
});

/** A subscription written directly (the platform's limit of 5 per service is not checked here). */
async function subscribe(tenantId: string, serviceId: string, types: string[], enabled = true): Promise<string> {
  const [row] = await db.database.sql<{ id: string }[]>`
    insert into webhook_subscriptions (tenant_id, trace_service_id, name, url, event_types, secret_encrypted, enabled)
    values (${tenantId}, ${serviceId}, 's', ${`https://hooks.example.com/${crypto.randomUUID()}`}, ${types}, 'sealed', ${enabled})
    returning id`;
  return row.id;
}

let n = 0;
function event(tenantId: string, serviceId: string, type: MaturedMessage["type"]): MaturedMessage {
  n++;
  return {
    type,
    tenantId,
    traceServiceId: serviceId,
    serviceName: 'svc "quoted" \u00e9',
    entityPk: crypto.randomUUID(),
    ...(type === "session.matured" ? { sessionId: `conv-${n}` } : { traceId: `trace-${n}` }),
    maturationCount: 1,
    occurredAt: new Date(now.getTime() - n).toISOString(),
  };
}

const stored = (ids: string[]) =>
  db.database.sql<{ id: string; subscription_id: string; body: string; status: string; event_key: string }[]>`
    select id, subscription_id, body, status, event_key from webhook_deliveries where id = any(${ids}::text[])`;

test("each event gets one delivery per enabled subscription of its service listing its type, for entitled tenants only; the stored body is deliveryBody's", async () => {
  const both = await subscribe(entitled.tenantId, entitled.serviceId, ["session.matured", "trace.matured"]);
  const traces = await subscribe(entitled.tenantId, entitled.serviceId, ["trace.matured"]);
  await subscribe(entitled.tenantId, entitled.serviceId, ["session.matured"], false);
  const other = await subscribe(entitled.tenantId, entitled.otherServiceId, ["session.matured"]);
  await subscribe(unentitled.tenantId, unentitled.serviceId, ["session.matured", "trace.matured"]);
  const events = [
    event(entitled.tenantId, entitled.serviceId, "session.matured"),
    event(entitled.tenantId, entitled.serviceId, "trace.matured"),
    event(entitled.tenantId, entitled.otherServiceId, "trace.matured"),
    event(entitled.tenantId, entitled.otherServiceId, "session.matured"),
    event(unentitled.tenantId, unentitled.serviceId, "trace.matured"),
  ];
  const fanned = await fanOut(deps(), events);
  const subsOf = (i: number) =>
    fanned
      .filter(
        (d) =>
          d.row &&
          d.eventKey ===
            `${events[i].type === "session.matured" ? "session" : "trace"}:${events[i].entityPk}:1:${Date.parse(events[i].occurredAt)}`,
      )
      .map((d) => d.row!.subscription_id)
      .sort();
  expect(subsOf(0)).toEqual([both]);
  expect(subsOf(1)).toEqual([both, traces].sort());
  expect(subsOf(2)).toEqual([]);
  expect(subsOf(3)).toEqual([other]);
  expect(subsOf(4)).toEqual([]);
  expect(fanned).toHaveLength(4);
  expect(fanned.every((d) => d.fresh && d.attempts === 0 && d.row?.status === "pending")).toBe(true);
  const rows = await stored(fanned.map((d) => d.id));
  expect(rows).toHaveLength(4);
  for (const d of fanned) {
    const r = rows.find((x) => x.id === d.id)!;
    const e = events.find((x) => d.eventKey.includes(x.entityPk))!;
    const data = {
      tenant_id: e.tenantId,
      trace_service_id: e.traceServiceId,
      service_name: e.serviceName,
      maturation_count: 1,
      occurred_at: e.occurredAt,
      ...(e.type === "session.matured" ? { session_id: e.sessionId } : { trace_id: e.traceId }),
    };
    expect(r.body).toBe(deliveryBody({ id: d.id, type: e.type, timestamp: now, data }));
    expect(d.row!.body).toBe(r.body);
    expect(d.id).toMatch(/^msg_[A-Za-z0-9_-]{24}$/);
  }

  // A replay of the batch (and an event twice in one batch) inserts nothing and hands back the
  // pending deliveries, none of them fresh.
  const again = await fanOut(deps(), [...events, events[1]]);
  expect(again.map((d) => d.id).sort()).toEqual(fanned.map((d) => d.id).sort());
  expect(again.every((d) => !d.fresh && !d.row)).toBe(true);
  const [{ count }] = await db.database.sql<{ count: number }[]>`
    select count(*)::int as count from webhook_deliveries where event_key = any(${again.map((d) => d.eventKey)}::text[])`;
  expect(count).toBe(4);
});

test("an event matched by many subscriptions (past the platform's limit of 5) gets one delivery each, each body its own id", async () => {
  const service = (await createService(db.database.db, { tenantId: entitled.tenantId, name: "wide" })).id;
  const subs: string[] = [];
  for (let i = 0; i < 11; i++) subs.push(await subscribe(entitled.tenantId, service, ["trace.matured"]));
  const e = event(entitled.tenantId, service, "trace.matured");
  const fanned = await fanOut(deps(), [event(entitled.tenantId, entitled.otherServiceId, "trace.matured"), e]);
  expect(fanned.map((d) => d.id)).toHaveLength(subs.length);
  expect(new Set(fanned.map((d) => d.id)).size).toBe(subs.length);
  expect(fanned.every((d) => d.fresh)).toBe(true);
  const rows = await stored(fanned.map((d) => d.id));
  expect(rows.map((r) => r.subscription_id).sort()).toEqual(subs.sort());
  for (const r of rows) expect(JSON.parse(r.body).id).toBe(r.id);
});
