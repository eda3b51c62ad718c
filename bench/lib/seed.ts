import type postgres from "postgres";
import { createService } from "@cellar/shared/admin/tenancy";
import type { SecretBox } from "@cellar/shared/crypto";
import type { Db } from "@cellar/shared/db/client";
import { decodePayload, encodePayload } from "@cellar/shared/db/payload-codec";
import { toCidrs } from "@cellar/shared/webhooks/address";
import { createSubscription } from "../../apps/platform/src/webhooks/service";
import type { TraceInput } from "../../apps/processor/src/analysis/transcript";

/**
 * The benches' seed data, in one place. Tenants, services, users and webhook subscriptions go
 * through the project's own writers (shared/admin, the platform's webhook service), so a schema
 * change reaches them. Bulk telemetry (100,000 matured sessions with their analyses) is generated
 * inside Postgres from one statement: the processor's writers take a trace at a time and would
 * spend minutes on what a bench needs in seconds; those statements live here only.
 */

/** A trace service of the tenant (shared/admin/tenancy.ts). */
export const seedService = (db: Db, tenantId: string, name: string) => createService(db, { tenantId, name });

/**
 * A webhook subscription created by the platform's own service (apps/platform/src/webhooks/service.ts),
 * as its owner would through the API; loopback receivers are allowed (the bench's insecure allowlist).
 */
export async function seedWebhookSubscription(
  deps: { sql: postgres.Sql; secretBox: SecretBox },
  owner: { tenantId: string; ownerId: string },
  input: { traceServiceId: string; url: string; name?: string; eventTypes?: string[] },
): Promise<{ id: string; secret: string }> {
  const { row, secret } = await createSubscription(
    {
      sql: deps.sql,
      secretBox: deps.secretBox,
      resolveDns: async (host) => [host],
      allowlist: toCidrs("127.0.0.0/8"),
      now: () => new Date(),
    },
    { keyId: "bench", tenantId: owner.tenantId, userId: owner.ownerId, role: "owner", plan: "pro" },
    {
      traceServiceId: input.traceServiceId,
      name: input.name ?? input.url,
      url: input.url,
      eventTypes: input.eventTypes ?? ["session.matured"],
    },
  );
  return { id: row.id, secret };
}

/**
 * `count` matured sessions `sess-1` .. `sess-<count>` over the last 30 days (a third in prod), each
 * with an analysis whose rollups vary so filters select subsets. `vip`: every tenth is labelled
 * vip; `metrics`: the analyses carry turns, latencyP95Ms and totalTokens in `metrics` too.
 */
export async function seedMaturedSessions(
  sql: postgres.Sql,
  input: { tenantId: string; serviceId: string; count: number; vip?: boolean; metrics?: boolean },
): Promise<void> {
  const { tenantId: T, serviceId: S } = input;
  await sql`
    insert into sessions (tenant_id, trace_service_id, session_id, environment, status, first_activity_at, last_activity_at, last_ingested_at,
      maturation_count, matured_at, activity_seq, labels)
    select ${T}, ${S}, 'sess-' || g, case when g % 3 = 0 then 'prod' else 'staging' end, 'matured',
      now() - (g % 43200) * interval '1 minute' - interval '10 minutes', now() - (g % 43200) * interval '1 minute',
      now() - (g % 43200) * interval '1 minute', 1, now() - (g % 43200) * interval '1 minute' + interval '3 minutes', 1,
      case when ${input.vip ?? false} and g % 10 = 0 then '["vip"]'::jsonb else '[]'::jsonb end
    from generate_series(1, ${input.count}) g`;
  await sql`
    insert into session_analyses (session_pk, tenant_id, trace_service_id, session_id, maturation_count, computed_at, through_ingested_at,
      through_activity_seq, item_count, truncated, duration_ms, turns, model_calls, tool_calls, total_tokens, errors, problems, cost_usd, metrics)
    select s.id, s.tenant_id, s.trace_service_id, s.session_id, 1, s.matured_at, s.last_ingested_at, 1, 12, false,
      (n % 600) * 1000, 1 + n % 9, 2 + n % 17, n % 7, 500 + (n * 37) % 40000, (n % 23 = 0)::int, n % 4, ((n * 37) % 40000) / 1e6,
      case when ${input.metrics ?? false}
        then jsonb_build_object('turns', 1 + n % 9, 'latencyP95Ms', (n * 13) % 5000, 'totalTokens', 500 + (n * 37) % 40000)
        else '{}'::jsonb end
    from (select s.*, substr(s.session_id, 6)::int as n from sessions s where s.trace_service_id = ${S}) s`;
}

/**
 * One matured trace of a session with its payload stored as the processor stores it (deflated),
 * as maturation reads it back (TraceInput of apps/processor/src/analysis/transcript.ts).
 */
export async function insertMaturedTrace(
  sql: postgres.Sql,
  o: { tenantId: string; serviceId: string; sessionPk: string; sessionId: string; traceId: string; start: Date },
  payload: Record<string, unknown>,
): Promise<TraceInput> {
  const end = new Date(o.start.getTime() + 900);
  const [tr] = await sql<{ id: string }[]>`
    insert into traces (tenant_id, trace_service_id, session_pk, trace_id, session_id, environment, provider, model, start_time, end_time,
      awaits_messages, received_at, ingested_at, status, maturation_count, matured_at, published_count)
    values (${o.tenantId}, ${o.serviceId}, ${o.sessionPk}, ${o.traceId}, ${o.sessionId}, 'bench', 'openai', 'gpt-4o-mini', ${o.start}, ${end}, false, ${o.start}, ${o.start}, 'matured', 1, ${end}, 1)
    returning id`;
  const payloadZ = encodePayload({ ...payload, start_time: o.start.toISOString(), end_time: end.toISOString() });
  await sql`insert into trace_payloads (trace_pk, tenant_id, payload_z) values (${tr.id}, ${o.tenantId}, ${payloadZ})`;
  return {
    pk: tr.id,
    traceId: o.traceId,
    startTime: o.start,
    endTime: end,
    payload: decodePayload({ payload_z: payloadZ }),
  };
}
