import { connect, type ConnectionOptions, type NatsConnection } from "@nats-io/transport-node";
import {
  AckPolicy,
  DeliverPolicy,
  jetstream,
  jetstreamManager,
  type JetStreamClient,
  type JetStreamManager,
  type ConsumerConfig,
  type StreamConfig,
} from "@nats-io/jetstream";
import { Kvm, type KV } from "@nats-io/kv";

const NS_PER_MS = 1_000_000;

/**
 * Names of every stream, subject, bucket and durable consumer. Production uses the contract's
 * names (`INGEST`, `MATURED`, `DELIVERIES`, `activity`); tests pass a namespace so each file
 * gets its own.
 */
export interface Topology {
  ingestStream: string;
  maturedStream: string;
  deliveriesStream: string;
  activityBucket: string;
  /** Subjects: `<prefix>ingest.trace`, `<prefix>ingest.event`, `<prefix>matured.session`, ... */
  subjectPrefix: string;
  consumers: {
    processorIngest: string;
    processorActivity: string;
    dispatcherMatured: string;
    dispatcherDeliveries: string;
  };
}

export function createTopology(namespace = ""): Topology {
  const n = namespace ? `${namespace}_` : "";
  return {
    ingestStream: `${n}INGEST`,
    maturedStream: `${n}MATURED`,
    deliveriesStream: `${n}DELIVERIES`,
    activityBucket: `${n}activity`,
    subjectPrefix: namespace ? `${namespace}.` : "",
    consumers: {
      processorIngest: "processor-ingest",
      processorActivity: "processor-activity",
      dispatcherMatured: "dispatcher-matured",
      dispatcherDeliveries: "dispatcher-deliveries",
    },
  };
}

export const subjects = {
  ingestTrace: (t: Topology) => `${t.subjectPrefix}ingest.trace`,
  ingestEvent: (t: Topology) => `${t.subjectPrefix}ingest.event`,
  matured: (t: Topology, kind: "session" | "trace") => `${t.subjectPrefix}matured.${kind}`,
  delivery: (t: Topology) => `${t.subjectPrefix}deliveries.attempt`,
};

/** How long an activity delete marker lives: a processor may be down this long and miss nothing. */
export const ACTIVITY_MARKER_TTL_MS = 3 * 24 * 3600 * 1000;
/** Client retries within this window are stored once (Nats-Msg-Id). */
export const INGEST_DUPLICATE_WINDOW_MS = 10 * 60 * 1000;

export interface NatsHandles {
  nc: NatsConnection;
  js: JetStreamClient;
  jsm: JetStreamManager;
  kv: KV;
  topology: Topology;
}

/** `extra` overrides the defaults (e.g. `noAsyncTraces` on hot publish paths: no stack capture per request). */
export async function connectNats(url: string, name: string, extra: Partial<ConnectionOptions> = {}): Promise<NatsConnection> {
  return connect({ servers: url.split(","), name, maxReconnectAttempts: -1, reconnectTimeWait: 500, ...extra });
}

/**
 * Creates or updates every stream, the activity bucket and the durable consumers. Idempotent.
 * `replicas` (NATS_REPLICAS) is applied to all of them, and changed in place on existing ones.
 */
export async function ensureTopology(nc: NatsConnection, topology: Topology, opts: { replicas?: number } = {}): Promise<NatsHandles> {
  const jsm = await jetstreamManager(nc);
  const replicas = opts.replicas ?? 1;
  const ensureStream = (config: Partial<StreamConfig> & { name: string }) => ensureStreamConfig(jsm, { ...config, num_replicas: replicas });
  const ensureConsumer = (_: JetStreamManager, stream: string, config: Partial<ConsumerConfig> & { durable_name: string }) =>
    ensureConsumerConfig(jsm, stream, { ...config, num_replicas: replicas });
  await ensureStream({
    name: topology.ingestStream,
    subjects: [`${topology.subjectPrefix}ingest.>`],
    duplicate_window: INGEST_DUPLICATE_WINDOW_MS * NS_PER_MS,
    max_age: 7 * 24 * 3600 * 1000 * NS_PER_MS,
  });
  await ensureStream({
    name: topology.maturedStream,
    subjects: [`${topology.subjectPrefix}matured.>`],
    duplicate_window: 24 * 3600 * 1000 * NS_PER_MS,
    max_age: 7 * 24 * 3600 * 1000 * NS_PER_MS,
  });
  await ensureStream({
    name: topology.deliveriesStream,
    subjects: [`${topology.subjectPrefix}deliveries.>`],
    duplicate_window: 24 * 3600 * 1000 * NS_PER_MS,
    // Retries span ~52 hours; keep messages well past the last attempt.
    max_age: 4 * 24 * 3600 * 1000 * NS_PER_MS,
  });

  // Per-key TTL, history 1, no bucket max age: see nats-notes.md (markers outlive a down consumer).
  const kvm = new Kvm(nc);
  const kv = await kvm.create(topology.activityBucket, { history: 1, markerTTL: ACTIVITY_MARKER_TTL_MS, replicas });
  const kvStream = `KV_${topology.activityBucket}`;
  // Kvm.create leaves an existing bucket's config alone: scale it here.
  const kvInfo = await jsm.streams.info(kvStream);
  if (kvInfo.config.num_replicas !== replicas) await jsm.streams.update(kvStream, { ...kvInfo.config, num_replicas: replicas });

  await ensureConsumer(jsm, topology.ingestStream, {
    durable_name: topology.consumers.processorIngest,
    ack_policy: AckPolicy.Explicit,
    ack_wait: 30_000 * NS_PER_MS,
    max_ack_pending: 10_000,
    deliver_policy: DeliverPolicy.All,
  });
  await ensureConsumer(jsm, kvStream, {
    durable_name: topology.consumers.processorActivity,
    ack_policy: AckPolicy.Explicit,
    // Short: on the KV stream some nak'd markers were seen to come back only after ack_wait
    // (docs/maturation.md); a replay of a marker being worked on is harmless (row locks).
    ack_wait: 20_000 * NS_PER_MS,
    max_ack_pending: 10_000,
    deliver_policy: DeliverPolicy.All,
    filter_subject: `$KV.${topology.activityBucket}.>`,
  });
  await ensureConsumer(jsm, topology.maturedStream, {
    durable_name: topology.consumers.dispatcherMatured,
    ack_policy: AckPolicy.Explicit,
    ack_wait: 30_000 * NS_PER_MS,
    max_ack_pending: 10_000,
    deliver_policy: DeliverPolicy.All,
  });
  await ensureConsumer(jsm, topology.deliveriesStream, {
    durable_name: topology.consumers.dispatcherDeliveries,
    ack_policy: AckPolicy.Explicit,
    ack_wait: 60_000 * NS_PER_MS,
    // Every delivery waiting on a retry delay holds a slot (nats-notes.md).
    max_ack_pending: 200_000,
    deliver_policy: DeliverPolicy.All,
  });
  return { nc, js: jetstream(nc), jsm, kv, topology };
}

async function ensureStreamConfig(jsm: JetStreamManager, config: Partial<StreamConfig> & { name: string }) {
  try {
    const info = await jsm.streams.info(config.name);
    // Only when something differs: an update is a cluster-wide proposal, and four apps boot at once.
    if (differs(info.config, config)) await jsm.streams.update(config.name, config);
  } catch (err) {
    if (!isNotFound(err)) throw err;
    await jsm.streams.add(config);
  }
}

/** nats-server's JSConsumerReplicasExceedsStream: the stream is still growing its peer group. */
const CONSUMER_REPLICAS_EXCEED_STREAM = 10126;
/** How long a consumer waits for its stream to finish scaling up (peers catch up in seconds). */
const SCALE_WAIT_MS = 60_000;

async function ensureConsumerConfig(jsm: JetStreamManager, stream: string, config: Partial<ConsumerConfig> & { durable_name: string }) {
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

async function ensureConsumerOnce(jsm: JetStreamManager, stream: string, config: Partial<ConsumerConfig> & { durable_name: string }) {
  try {
    const info = await jsm.consumers.info(stream, config.durable_name);
    if (differs(info.config, config)) await jsm.consumers.update(stream, config.durable_name, config);
  } catch (err) {
    if (!isNotFound(err)) throw err;
    try {
      await jsm.consumers.add(stream, config);
    } catch (addErr) {
      // Another instance created it between our info and add.
      if (!String(addErr).includes("already")) throw addErr;
    }
  }
}

/** True when any field we declare has another value on the server. */
function differs(current: object, wanted: object): boolean {
  const have = current as Record<string, unknown>;
  return Object.entries(wanted).some(([k, v]) => JSON.stringify(have[k]) !== JSON.stringify(v));
}

function isNotFound(err: unknown): boolean {
  const text = String((err as Error)?.message ?? err);
  return text.includes("not found") || (err as { code?: string | number })?.code === 404 || (err as { api_error?: { code?: number } })?.api_error?.code === 404;
}
