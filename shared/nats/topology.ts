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

/** Creates or updates every stream, the activity bucket and the durable consumers. Idempotent. */
export async function ensureTopology(nc: NatsConnection, topology: Topology): Promise<NatsHandles> {
  const jsm = await jetstreamManager(nc);
  await ensureStream(jsm, {
    name: topology.ingestStream,
    subjects: [`${topology.subjectPrefix}ingest.>`],
    duplicate_window: INGEST_DUPLICATE_WINDOW_MS * NS_PER_MS,
    max_age: 7 * 24 * 3600 * 1000 * NS_PER_MS,
  });
  await ensureStream(jsm, {
    name: topology.maturedStream,
    subjects: [`${topology.subjectPrefix}matured.>`],
    duplicate_window: 24 * 3600 * 1000 * NS_PER_MS,
    max_age: 7 * 24 * 3600 * 1000 * NS_PER_MS,
  });
  await ensureStream(jsm, {
    name: topology.deliveriesStream,
    subjects: [`${topology.subjectPrefix}deliveries.>`],
    duplicate_window: 24 * 3600 * 1000 * NS_PER_MS,
    // Retries span ~52 hours; keep messages well past the last attempt.
    max_age: 4 * 24 * 3600 * 1000 * NS_PER_MS,
  });

  // Per-key TTL, history 1, no bucket max age: see nats-notes.md (markers outlive a down consumer).
  const kvm = new Kvm(nc);
  const kv = await kvm.create(topology.activityBucket, { history: 1, markerTTL: ACTIVITY_MARKER_TTL_MS });

  const kvStream = `KV_${topology.activityBucket}`;
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

async function ensureStream(jsm: JetStreamManager, config: Partial<StreamConfig> & { name: string }) {
  try {
    await jsm.streams.info(config.name);
    await jsm.streams.update(config.name, config);
  } catch (err) {
    if (!isNotFound(err)) throw err;
    await jsm.streams.add(config);
  }
}

async function ensureConsumer(jsm: JetStreamManager, stream: string, config: Partial<ConsumerConfig> & { durable_name: string }) {
  try {
    await jsm.consumers.info(stream, config.durable_name);
    await jsm.consumers.update(stream, config.durable_name, config);
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

function isNotFound(err: unknown): boolean {
  const text = String((err as Error)?.message ?? err);
  return text.includes("not found") || (err as { code?: string | number })?.code === 404 || (err as { api_error?: { code?: number } })?.api_error?.code === 404;
}
