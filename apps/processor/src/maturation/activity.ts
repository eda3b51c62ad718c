import type { JetStreamClient } from "@nats-io/jetstream";
import { laneOf, laneToken } from "@cellar/shared/nats/lanes";
import type { Topology } from "@cellar/shared/nats/topology";

/**
 * `session`: one key per open session, refreshed by each write that brings it new rows.
 * `batch`: one key per INGEST batch and tenant lane that inserted traces, named by the write's
 * transaction time in microseconds: traces never change after insert, so they all fall due
 * together, a window after that time (one key and one marker per batch and lane instead of per
 * trace).
 * `trace`: one key per trace, used only when a replayed batch finds a trace still active.
 *
 * Keys are `<kind>.<lane>.<pk>`, the lane that of the entity's tenant (shared/nats/lanes.ts): each
 * lane has its own marker consumer (catalogue.ts, activityStream), so one tenant's maturation
 * backlog waits in its own lane (issue 41, docs/maturation.md "Tenant lanes"). Keys written before
 * lanes (`<kind>.<pk>`) are still matured, by the unlaned consumer.
 */
export type EntityKind = "session" | "trace" | "batch";
const KEY_PREFIX: Record<EntityKind, string> = { session: "s", trace: "t", batch: "b" };
const KIND_OF: Record<string, EntityKind> = { s: "session", t: "trace", b: "batch" };

/**
 * What an activity key stands for: `lane` is the tenant's lane token (`00` .. `15`), null only for
 * a key written before lanes (a marker of one re-arms it as it was).
 */
export interface ActivityEntity {
  kind: EntityKind;
  pk: string;
  lane: string | null;
}

/** The lane token of a tenant's activity keys. */
export const activityLane = (tenantId: string): string => laneToken(laneOf(tenantId));

export function activitySubject(topology: Topology, e: ActivityEntity): string {
  const lane = e.lane === null ? "" : `${e.lane}.`;
  return `$KV.${topology.activityBucket}.${KEY_PREFIX[e.kind]}.${lane}${e.pk}`;
}

/**
 * Parses `$KV.<bucket>.s.<lane>.<pk>` back into what it refers to; a key written before lanes,
 * `$KV.<bucket>.s.<pk>`, has lane null.
 */
export function parseActivitySubject(topology: Topology, subject: string): ActivityEntity | null {
  const prefix = `$KV.${topology.activityBucket}.`;
  if (!subject.startsWith(prefix)) return null;
  const tokens = subject.slice(prefix.length).split(".");
  if (tokens.length !== 2 && tokens.length !== 3) return null;
  const kind = KIND_OF[tokens[0]] ?? null;
  const pk = tokens.at(-1);
  const lane = tokens.length === 3 ? tokens[1] : null;
  return kind && pk ? { kind, pk, lane } : null;
}

/**
 * Markers come 0-320 ms after a key's expiry (the server checks about every 250 ms). Setting keys
 * to expire EARLY_SECONDS before the window ends and naking an early marker for the exact
 * remaining time would remove that jitter, but in bench runs some naked markers only came back
 * after the consumer's ack wait (60 s): p99 lateness 60 s instead of 2 s. Off (0) until that is
 * understood; the processor only naks early markers when this is > 0.
 */
export const EARLY_SECONDS = 0;
export function markerTtlSeconds(windowSeconds: number): number {
  return Math.max(1, windowSeconds - EARLY_SECONDS);
}

/**
 * Refreshes each entity's activity key with a per-key TTL of the maturation window: when the
 * key then sits idle for the window, the server writes a MaxAge delete marker (nats-notes.md).
 * KV's put has no TTL option, so publish to the key's subject with `ttl`.
 */
export async function refreshActivity(
  js: JetStreamClient,
  topology: Topology,
  entities: ActivityEntity[],
  windowSeconds: number,
): Promise<void> {
  const ttl = `${markerTtlSeconds(windowSeconds)}s`;
  await Promise.all(entities.map((e) => js.publish(activitySubject(topology, e), "1", { ttl, timeout: 10_000 })));
}

/** Whether a KV stream message is a server-written MaxAge delete marker (the maturation signal). */
export function isExpiryMarker(headers: { get(k: string): string } | undefined): boolean {
  return headers?.get("Nats-Marker-Reason") === "MaxAge";
}
