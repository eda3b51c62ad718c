import { connect, type ConnectionOptions, type NatsConnection } from "@nats-io/transport-node";
import {
  AckPolicy,
  DeliverPolicy,
  DiscardPolicy,
  JetStreamApiCodes,
  JetStreamApiError,
  jetstream,
  jetstreamManager,
  type JetStreamClient,
  type JetStreamManager,
  type ConsumerConfig,
  type StreamConfig,
} from "@nats-io/jetstream";
import { Kvm, type KV } from "@nats-io/kv";
import { CATALOGUE, consumersOf, INGEST_DUPLICATE_WINDOW_MS, type StreamSpec } from "./catalogue.ts";
import type { Topology } from "./names.ts";

const NS_PER_MS = 1_000_000;

export { createTopology, subjects, type Topology } from "./names.ts";

/** How long an activity delete marker lives: a processor may be down this long and miss nothing. */
export const ACTIVITY_MARKER_TTL_MS = 3 * 24 * 3600 * 1000;
export { INGEST_DUPLICATE_WINDOW_MS };

export interface NatsHandles {
  nc: NatsConnection;
  js: JetStreamClient;
  jsm: JetStreamManager;
  kv: KV;
  topology: Topology;
}

/** `extra` overrides the defaults (e.g. `noAsyncTraces` on hot publish paths: no stack capture per request). */
export async function connectNats(
  url: string,
  name: string,
  extra: Partial<ConnectionOptions> = {},
): Promise<NatsConnection> {
  return connect({ servers: url.split(","), name, maxReconnectAttempts: -1, reconnectTimeWait: 500, ...extra });
}

/**
 * Creates or updates every stream of the catalogue, the activity bucket and the durable consumers.
 * Idempotent. `replicas` (NATS_REPLICAS) applies to all of them, changed in place on existing ones.
 */
export async function ensureTopology(
  nc: NatsConnection,
  topology: Topology,
  opts: { replicas?: number } = {},
): Promise<NatsHandles> {
  const jsm = await jetstreamManager(nc);
  const replicas = opts.replicas ?? 1;
  for (const spec of CATALOGUE) {
    if (!spec.subjects) continue; // the KV stream: created by the KV client below
    await ensureStreamConfig(jsm, {
      num_replicas: replicas,
      name: spec.name(topology),
      subjects: spec.subjects(topology),
      ...(spec.duplicateWindowMs ? { duplicate_window: spec.duplicateWindowMs * NS_PER_MS } : {}),
      ...(spec.maxAgeMs ? { max_age: spec.maxAgeMs * NS_PER_MS } : {}),
      ...(spec.maxBytes ? { max_bytes: spec.maxBytes, discard: DiscardPolicy.Old } : {}),
    });
  }

  // Per-key TTL, history 1, no bucket max age: see nats-notes.md (markers outlive a down consumer).
  const kvm = new Kvm(nc);
  const kv = await kvm.create(topology.activityBucket, { history: 1, markerTTL: ACTIVITY_MARKER_TTL_MS, replicas });
  // Kvm.create leaves an existing bucket's config alone: scale it here.
  const kvStream = `KV_${topology.activityBucket}`;
  const kvInfo = await jsm.streams.info(kvStream);
  if (kvInfo.config.num_replicas !== replicas)
    await jsm.streams.update(kvStream, { ...kvInfo.config, num_replicas: replicas });

  for (const spec of CATALOGUE) {
    const c = spec.consumer;
    if (!c) continue;
    // A stream's consumers at once: a laned stream has 16 or 17, and every app start runs this
    // (SETUP_ON_START): one after another their round trips add up on a loaded machine (issue 41).
    await Promise.all(
      consumersOf(spec, topology).map((one) =>
        ensureConsumerConfig(jsm, spec.name(topology), {
          durable_name: one.durable,
          ack_policy: AckPolicy.Explicit,
          ack_wait: c.ackWaitMs * NS_PER_MS,
          max_ack_pending: one.maxAckPending,
          // Enforced by the consume runtime, which dead-letters on the last delivery (catalogue.ts).
          max_deliver: -1,
          // A lane consumer created on an upgraded stream starts at its first message: its subjects
          // are new, so nothing the retired consumer already handled is replayed.
          deliver_policy: DeliverPolicy.All,
          num_replicas: replicas,
          ...(one.filterSubject ? { filter_subject: one.filterSubject } : {}),
        }),
      ),
    );
    await narrowRetired(jsm, spec, topology);
  }
  return { nc, js: jetstream(nc), jsm, kv, topology };
}

/**
 * Upgrade from one consumer to lanes: the retired consumer, if it still exists, keeps only the
 * subjects of before lanes, so it never takes a lane message and its backlog is finite. Its
 * position (what it acked) is kept; the consume runtime drains it, then deletes it.
 */
async function narrowRetired(jsm: JetStreamManager, spec: StreamSpec<unknown>, topology: Topology): Promise<void> {
  const retired = spec.consumer?.lanes?.retired;
  if (!retired) return;
  const stream = spec.name(topology);
  let info;
  try {
    info = await jsm.consumers.info(stream, retired.durable);
  } catch (err) {
    if (isNotFound(err)) return; // a fresh install, or already drained and deleted
    throw err;
  }
  const wanted = retired.subjects(topology);
  if (JSON.stringify(info.config.filter_subjects ?? []) === JSON.stringify(wanted)) return;
  // `filter_subject: undefined` drops the old single filter (the client merges into the current config).
  await jsm.consumers.update(stream, retired.durable, { filter_subject: undefined, filter_subjects: wanted });
}

async function ensureStreamConfig(jsm: JetStreamManager, config: Partial<StreamConfig> & { name: string }) {
  try {
    const info = await jsm.streams.info(config.name);
    // Only when something differs: an update is a cluster-wide proposal, and four apps boot at once.
    if (differs(info.config, config)) await jsm.streams.update(config.name, config);
  } catch (err) {
    if (!isNotFound(err)) throw err;
    try {
      await jsm.streams.add(config);
    } catch (addErr) {
      // Another instance created it between our info and add.
      if (!(addErr instanceof JetStreamApiError && addErr.code === STREAM_NAME_IN_USE)) throw addErr;
    }
  }
}

/** nats-server's JSConsumerReplicasExceedsStream: the stream is still growing its peer group. */
const CONSUMER_REPLICAS_EXCEED_STREAM = 10126;
/** How long a consumer waits for its stream to finish scaling up (peers catch up in seconds). */
const SCALE_WAIT_MS = 60_000;

async function ensureConsumerConfig(
  jsm: JetStreamManager,
  stream: string,
  config: Partial<ConsumerConfig> & { durable_name: string },
) {
  // A stream raised to N replicas reports N at once but adds its peers asynchronously; until
  // they exist the server refuses an N-replica consumer. Retry for a while.
  const deadline = Date.now() + SCALE_WAIT_MS;
  for (;;) {
    try {
      return await ensureConsumerOnce(jsm, stream, config);
    } catch (err) {
      if ((err as { code?: number }).code !== CONSUMER_REPLICAS_EXCEED_STREAM || Date.now() > deadline) throw err;
      await new Promise((r) => setTimeout(r, 250));
    }
  }
}

async function ensureConsumerOnce(
  jsm: JetStreamManager,
  stream: string,
  config: Partial<ConsumerConfig> & { durable_name: string },
) {
  try {
    const info = await jsm.consumers.info(stream, config.durable_name);
    if (differs(info.config, config)) await jsm.consumers.update(stream, config.durable_name, config);
  } catch (err) {
    if (!isNotFound(err)) throw err;
    try {
      await jsm.consumers.add(stream, config);
    } catch (addErr) {
      // Another instance created it between our info and add.
      if (!(addErr instanceof JetStreamApiError && CONSUMER_EXISTS.has(addErr.code))) throw addErr;
    }
  }
}

/** True when any field we declare has another value on the server. */
function differs(current: object, wanted: object): boolean {
  const have = current as Record<string, unknown>;
  return Object.entries(wanted).some(([k, v]) => JSON.stringify(have[k]) !== JSON.stringify(v));
}

// JetStream API error codes the client does not name (nats-server errors.json).
const STREAM_NAME_IN_USE = 10058;
/** JSConsumerAlreadyExists, JSConsumerNameExist. */
const CONSUMER_EXISTS = new Set([10148, 10013]);

function isNotFound(err: unknown): boolean {
  return (
    err instanceof JetStreamApiError &&
    (err.code === JetStreamApiCodes.StreamNotFound || err.code === JetStreamApiCodes.ConsumerNotFound)
  );
}
