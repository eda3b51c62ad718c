import type { JetStreamClient } from "@nats-io/jetstream";
import type { Topology } from "@cellar/shared/nats/topology";

/**
 * `session`: one key per open session, refreshed by each write that brings it new rows.
 * `batch`: one key per INGEST batch that inserted traces, named by the write's transaction
 * time in microseconds: traces never change after insert, so they all fall due together, a
 * window after that time (one key and one marker per batch instead of per trace).
 * `trace`: one key per trace, used only when a replayed batch finds a trace still active.
 */
export type EntityKind = "session" | "trace" | "batch";
const KEY_PREFIX: Record<EntityKind, string> = { session: "s", trace: "t", batch: "b" };
const KIND_OF: Record<string, EntityKind> = { s: "session", t: "trace", b: "batch" };

export function activitySubject(topology: Topology, kind: EntityKind, pk: string): string {
  return `$KV.${topology.activityBucket}.${KEY_PREFIX[kind]}.${pk}`;
}

/** Parses `$KV.<bucket>.s.<pk>` back into what it refers to. */
export function parseActivitySubject(topology: Topology, subject: string): { kind: EntityKind; pk: string } | null {
  const prefix = `$KV.${topology.activityBucket}.`;
  if (!subject.startsWith(prefix)) return null;
  const [k, pk] = subject.slice(prefix.length).split(".");
  const kind = KIND_OF[k] ?? null;
  return kind && pk ? { kind, pk } : null;
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
  entities: Array<{ kind: EntityKind; pk: string }>,
  windowSeconds: number,
): Promise<void> {
  const ttl = `${markerTtlSeconds(windowSeconds)}s`;
  await Promise.all(
    entities.map((e) => js.publish(activitySubject(topology, e.kind, e.pk), "1", { ttl, timeout: 10_000 })),
  );
}

/** Whether a KV stream message is a server-written MaxAge delete marker (the maturation signal). */
export function isExpiryMarker(headers: { get(k: string): string } | undefined): boolean {
  return headers?.get("Nats-Marker-Reason") === "MaxAge";
}
