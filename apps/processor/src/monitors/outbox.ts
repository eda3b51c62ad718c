import type postgres from "postgres";
import type { JetStreamClient } from "@nats-io/jetstream";
import type { Logger } from "@cellar/shared/logger";
import { maturedStream } from "@cellar/shared/nats/catalogue";
import { publish } from "@cellar/shared/nats/publish";
import type { Topology } from "@cellar/shared/nats/topology";
import { monitorEventKey, type MonitorEventMessage } from "@cellar/shared/payloads";

export interface OutboxDeps {
  sql: postgres.Sql;
  js: JetStreamClient;
  topology: Topology;
  logger: Logger;
}

/**
 * Publishes committed monitor events to MATURED with message id `monitor:<id>:<seq>` and marks
 * their outbox rows. Publishing twice (a crash between the publish and the mark, the relay beside
 * the consumer) is harmless: JetStream drops the duplicate within its window (a day) and the
 * dispatcher's delivery rows are unique per subscription and event beyond it.
 */
export async function publishMonitorEvents(deps: OutboxDeps, events: MonitorEventMessage[]): Promise<void> {
  if (events.length === 0) return;
  await Promise.all(
    events.map((e) => publish(deps.js, deps.topology, maturedStream, e, { msgID: monitorEventKey(e) })),
  );
  await deps.sql`
    update monitor_events set published_at = now()
    from unnest(${events.map((e) => e.monitorId)}::uuid[], ${events.map((e) => e.seq)}::int[]) as x(monitor_id, seq)
    where monitor_events.monitor_id = x.monitor_id and monitor_events.seq = x.seq and published_at is null`;
}

/** Outbox rows older than this are the relay's: younger ones are still being published by their writer. */
export const RELAY_AFTER_MS = 2_000;

/**
 * The outbox relay: state changes committed but never published (the processor stopped between
 * the commit and the publish) are published from their stored message, oldest first, 500 a pass.
 */
export async function relayUnpublished(deps: OutboxDeps): Promise<number> {
  const rows = await deps.sql<{ payload: MonitorEventMessage }[]>`
    select payload from monitor_events
    where event_type is not null and published_at is null and created_at < now() - ${RELAY_AFTER_MS} * interval '1 millisecond'
    order by created_at limit 500`;
  await publishMonitorEvents(
    deps,
    rows.map((r) => r.payload),
  );
  if (rows.length) deps.logger.info("published monitor events left in the outbox", { count: rows.length });
  return rows.length;
}
