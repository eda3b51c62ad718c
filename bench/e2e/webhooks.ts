import { spawn, type ChildProcess } from "node:child_process";
import type postgres from "postgres";
import { bootstrapTenant, createService } from "@cellar/shared/admin/tenancy";
import type { Db } from "@cellar/shared/db/client";
import { freePort } from "../../scripts/infra/ports";
import { pct } from "../lib/proc";

/**
 * The e2e bench's webhook mode, set up as a new user would: tenants with webhooks enabled, each
 * with the bench's service subscribed to both event types through the platform API (POST
 * /webhooks), delivering to a local receiver (bench/e2e/receiver.ts) that verifies every
 * signature. The apps need WEBHOOK_INSECURE_ALLOWLIST=127.0.0.0/8 for the plain-HTTP receiver.
 */
export interface WebhookRig {
  /** Telemetry keys of the extra tenants (the bench's own tenant is subscribed too). */
  extraTelemetryKeys: string[];
  receiver: ChildProcess;
  /** Per-stage tallies: waits until the stage's deliveries are settled, then compares. */
  settle(o: { sql: postgres.Sql; prefix: string; since: Date; boundMs: number }): Promise<WebhookStage>;
}

export interface WebhookStage {
  /** MATURED events of the stage's sessions and traces (what should be delivered, one subscription each). */
  expected: number;
  /** Delivery rows recorded, and of them delivered. */
  recorded: number;
  delivered: number;
  /** Distinct deliveries that reached the receiver with a valid signature, and bad ones. */
  receivedValid: number;
  invalid: number;
  duplicates: number;
  /** Arrival minus the maturation time (data.occurred_at), ms. */
  lagP50: number;
  lagP99: number;
  /** Every expected delivery recorded, delivered, received once with a valid signature. */
  ok: boolean;
}

/** What the receiver counted since the last GET /stats. */
export interface Tally {
  received: number;
  valid: number;
  invalid: number;
  duplicates: number;
  /** First arrivals with a valid signature, by event type. */
  byType: Record<string, number>;
  /** Arrival minus data.occurred_at, ms, one per first arrival of a delivery id. */
  lagsMs: number[];
}

export const WEBHOOK_EVENT_TYPES = ["session.matured", "trace.matured"];

export async function setupWebhooks(o: {
  db: Db;
  sql: postgres.Sql;
  platformBase: string;
  tenants: number;
  /** The services of every tenant subscribed (each to both event types). */
  services: string[];
  /** The bench's own tenant (created with webhooks on) and its platform key. */
  own: { tenantId: string; platformKey: string };
}): Promise<WebhookRig> {
  const port = await freePort();
  const all: Array<{ tenantId: string; platformKey: string; telemetryKey?: string }> = [o.own];
  for (let i = 1; i < o.tenants; i++) {
    const t = await bootstrapTenant(o.db, { name: `bench-${i}`, plan: "pro", webhooks: true });
    all.push({ tenantId: t.tenantId, platformKey: t.platformKey, telemetryKey: t.telemetryKey });
  }
  const secrets: Record<string, string> = {};
  for (const [i, t] of all.entries())
    for (const [k, service] of o.services.entries()) {
      // A subscription names its service: create it now (a seeded cluster already has it).
      const svc = await createService(o.db, { tenantId: t.tenantId, name: service }).catch(() => null);
      const serviceId =
        svc?.id ??
        (
          await o.sql<
            { id: string }[]
          >`select id from trace_services where tenant_id = ${t.tenantId} and name = ${service}`
        )[0].id;
      const hook = k === 0 ? `/hook/${i}` : `/hook/${i}-${k}`;
      const res = await fetch(`${o.platformBase}/webhooks`, {
        method: "POST",
        headers: { authorization: `Token ${t.platformKey}`, "content-type": "application/json" },
        body: JSON.stringify({
          trace_service_id: serviceId,
          name: k === 0 ? `bench-${i}` : `bench-${i}-${k}`,
          url: `http://127.0.0.1:${port}${hook}`,
          event_types: WEBHOOK_EVENT_TYPES,
        }),
      });
      const body = (await res.json()) as { secret?: string; error?: string };
      if (res.status !== 200 && res.status !== 201) throw new Error(`POST /webhooks: ${res.status} ${body.error}`);
      secrets[hook] = body.secret!;
    }
  const receiver = spawn(process.execPath, ["bench/e2e/receiver.ts", JSON.stringify({ port, secrets })], {
    cwd: `${import.meta.dir}/../..`,
    stdio: ["ignore", "pipe", "inherit"],
  });
  await new Promise<void>((res, rej) => {
    receiver.stdout!.once("data", () => res());
    receiver.once("exit", (code) => rej(new Error(`webhook receiver exited (${code})`)));
  });
  const stats = async () => (await (await fetch(`http://127.0.0.1:${port}/stats`)).json()) as Tally;
  return {
    extraTelemetryKeys: all.flatMap((t) => (t.telemetryKey ? [t.telemetryKey] : [])),
    receiver,
    async settle({ sql, prefix, since, boundMs }) {
      const deadline = Date.now() + boundMs;
      const like = `${prefix}-%`;
      let expected = 0;
      let rows = { recorded: 0, delivered: 0 };
      const lags: number[] = [];
      let valid = 0,
        invalid = 0,
        duplicates = 0;
      while (Date.now() < deadline) {
        [{ expected }] = await sql<{ expected: number }[]>`
          select (coalesce((select sum(published_count) from sessions where session_id like ${like}), 0)
            + (select count(*) from traces t where session_id like ${like}
                and exists (select 1 from trace_analyses ta where ta.trace_pk = t.id)
                and not exists (select 1 from pending_traces p where p.ingested_at = t.ingested_at and p.trace_pk = t.id)))::int as expected`;
        [rows] = await sql<{ recorded: number; delivered: number }[]>`
          select count(*)::int as recorded, count(*) filter (where status = 'delivered')::int as delivered
          from webhook_deliveries where created_at >= ${since}`;
        const s = await stats();
        valid += Object.values(s.byType).reduce((a, b) => a + b, 0);
        invalid += s.invalid;
        duplicates += s.duplicates;
        lags.push(...s.lagsMs);
        if (rows.delivered >= expected && valid >= expected) break;
        await new Promise((r) => setTimeout(r, 1000));
      }
      lags.sort((a, b) => a - b);
      return {
        expected,
        ...rows,
        receivedValid: valid,
        invalid,
        duplicates,
        lagP50: Math.round(pct(lags, 50)),
        lagP99: Math.round(pct(lags, 99)),
        ok: rows.recorded === expected && rows.delivered === expected && valid === expected && invalid === 0,
      };
    },
  };
}
