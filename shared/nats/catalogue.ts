import { headers as natsHeaders, type MsgHdrs } from "@nats-io/transport-node";
import type { TSchema, Static } from "@sinclair/typebox";
import {
  DeliveryJob,
  isMonitorEvent,
  maturationsOf,
  MaturedMessage,
  MonitorEventMessage,
  MaturedBatch,
  type IngestStreamMessage,
  type MaturedStreamMessage,
} from "../payloads.ts";
import {
  INGEST_CHECKED,
  INGEST_CHECKED_HEADER,
  ingestMessageProblem,
  ingestMessageShapeProblem,
} from "../ingest-rules.ts";
import { compileValidator } from "../validation.ts";
import { ingestBatchProblem, isBatch } from "../ingest-batch.ts";
import { LANE_COUNT, laneOf, laneToken } from "./lanes.ts";
import type { Topology } from "./names.ts";

const SECOND = 1000;
const MINUTE = 60 * SECOND;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;

/** What a message decodes to, or why it cannot be handled at all (it goes to dead letters at once). */
export type Decoded<T> = { ok: true; value: T } | { ok: false; error: string };

/** Turns a delivered message into its typed value. Pure: no I/O, never throws. */
export interface MessageCodec<T> {
  decode(subject: string, data: Uint8Array, headers: MsgHdrs | undefined): Decoded<T>;
  /** The tenant a value belongs to, for dead-letter logs and listings. */
  tenantOf?(value: T): string | undefined;
}

/**
 * The durable consumer of a stream and its failure policy, enforced by the one consume runtime
 * (shared/nats/consume.ts):
 * - a message that fails to decode is dead-lettered at once;
 * - a failure classified transient (Postgres or NATS unavailable) is retried in place with
 *   backoff, the message kept in hand (heartbeats), never dead-lettered;
 * - a permanent failure (Postgres data error) dead-letters the one message at fault at once;
 * - any other failure naks with `backoffMs[deliveryCount - 1]` (last entry repeats) until
 *   delivery `maxDeliver`, whose failure dead-letters it.
 * `maxDeliver` is enforced by the runtime, not the server: a server-side limit would leave the
 * message unacked and invisible after its last delivery instead of moving it (nats-notes.md).
 */
export interface ConsumerSpec {
  durable: string;
  ackWaitMs: number;
  /** Every message waiting on a nak delay holds a slot (nats-notes.md). */
  maxAckPending: number;
  maxDeliver: number;
  backoffMs: readonly number[];
  /** `batch`: the handler gets up to maxBatch decoded messages; `each`: one message per call. */
  mode: "batch" | "each";
  filterSubject?: (t: Topology) => string;
  /**
   * Tenant lanes (lanes.ts): one durable consumer per lane, `<durable>-<lane>`, filtering
   * `filter(t, lane)`, each with `maxAckPending / count` slots; the consume runtime pulls them
   * all with a fair share of the in-flight budget each (each mode: fair-slots.ts; batch mode:
   * batches taken from the busy lanes in turn, consume/batch.ts).
   */
  lanes?: LaneSpec;
  /**
   * The level a dead letter of this stream is logged at (default warn): `error` where it means
   * data a client was told is stored did not land (INGEST, docs/dead-letters.md).
   */
  deadLetterLogLevel?: "warn" | "error";
}

export interface LaneSpec {
  count: number;
  /** The subject filter of one lane (`lane` is its token, `00` .. ). */
  filter(t: Topology, lane: string): string;
  /**
   * The single consumer the lanes replaced, and the subjects it published to before lanes (no
   * lane token). On upgrade `ensureTopology` narrows it to those subjects, the consume runtime
   * keeps pulling it until it has nothing pending or in hand and no message arrived on them for
   * a quiet period, then deletes it (docs/webhooks.md, Upgrading to lanes).
   */
  retired?: { durable: string; subjects(t: Topology): string[] };
  /**
   * A permanent consumer, named the spec's `durable`, for the subjects without a lane token
   * (`filter`): what an older publisher, an operator or a replayed dead letter puts there is still
   * consumed, beside the lanes (INGEST). Pulled like a lane.
   */
  unlaned?: { filter(t: Topology): string };
}

/** One durable consumer on the server, as `ensureTopology` creates it and the runtime pulls it. */
export interface DurableConsumer {
  durable: string;
  filterSubject?: string;
  maxAckPending: number;
  /** Its lane token when the stream is laned. */
  lane?: string;
}

/** Every durable consumer a stream's spec declares: one, or one per lane. */
export function consumersOf(spec: StreamSpec<any>, t: Topology): DurableConsumer[] {
  const c = spec.consumer;
  if (!c) return [];
  if (!c.lanes)
    return [
      {
        durable: c.durable,
        maxAckPending: c.maxAckPending,
        ...(c.filterSubject ? { filterSubject: c.filterSubject(t) } : {}),
      },
    ];
  const lanes = c.lanes;
  const perLane = Math.ceil(c.maxAckPending / lanes.count);
  const unlaned: DurableConsumer[] = lanes.unlaned
    ? [{ durable: c.durable, filterSubject: lanes.unlaned.filter(t), maxAckPending: perLane, lane: UNLANED }]
    : [];
  return [
    ...unlaned,
    ...Array.from({ length: lanes.count }, (_, i) => {
      const lane = laneToken(i);
      return { durable: `${c.durable}-${lane}`, filterSubject: lanes.filter(t, lane), maxAckPending: perLane, lane };
    }),
  ];
}

/** The lane token of a laned stream's permanent consumer of subjects without a lane (LaneSpec.unlaned). */
export const UNLANED = "unlaned";

/** The lane consumer that receives a tenant's messages (tests, operators). */
export function laneConsumerOf(spec: StreamSpec<any>, t: Topology, tenantId: string): DurableConsumer {
  const all = consumersOf(spec, t);
  const lanes = spec.consumer?.lanes;
  if (!lanes) return all[0];
  return all[laneOf(tenantId, lanes.count) + (lanes.unlaned ? 1 : 0)];
}

export interface StreamSpec<T = unknown> {
  /** Catalogue key (also used in logs and dead-letter headers). */
  key: "ingest" | "matured" | "maturedRollups" | "deliveries" | "activity" | "deadLetters";
  name(t: Topology): string;
  /** Absent for the KV stream, which the KV client creates, and for a second consumer of another spec's stream. */
  subjects?(t: Topology): string[];
  /** Where `publish` puts a message (absent: not published through the catalogue). */
  subjectOf?(t: Topology, value: T): string;
  maxAgeMs?: number;
  maxBytes?: number;
  duplicateWindowMs?: number;
  codec: MessageCodec<T>;
  consumer?: ConsumerSpec;
}

/** A JSON body whose `check` returns a problem or null (and may normalise the value in place). */
export function checkedJsonCodec<T>(
  check: (value: unknown, headers: MsgHdrs | undefined) => string | null,
  tenantOf?: (v: T) => string | undefined,
): MessageCodec<T> {
  const text = new TextDecoder();
  return {
    decode(_subject, data, headers) {
      let value: unknown;
      try {
        value = JSON.parse(text.decode(data));
      } catch {
        return { ok: false, error: "body is not valid JSON" };
      }
      const problem = check(value, headers);
      return problem ? { ok: false, error: problem } : { ok: true, value: value as T };
    },
    tenantOf,
  };
}

/** A JSON body checked against a TypeBox schema. */
export function jsonCodec<S extends TSchema>(
  schema: S,
  tenantOf?: (v: Static<S>) => string | undefined,
): MessageCodec<Static<S>> {
  const validator = compileValidator(schema);
  return checkedJsonCodec((v) => validator.firstError(v), tenantOf);
}

/** A message of the activity bucket: its subject names the entity; its headers say whether it is an expiry marker. */
export interface ActivityKey {
  subject: string;
  headers: MsgHdrs | undefined;
}

const tenantField = (v: { tenantId?: string }) => v.tenantId;

/** Client publishes within this window are stored once (Nats-Msg-Id). */
export const INGEST_DUPLICATE_WINDOW_MS = 10 * MINUTE;

/**
 * INGEST: accepted traces and events, waiting for the processor to write them. Laned by tenant
 * (lanes.ts) like MATURED and DELIVERIES: one tenant's backlog waits in its own lane while the
 * processor takes every busy lane's messages in turn (consume/batch.ts), so it cannot delay
 * another tenant's writes and maturation (issue 41).
 */
export const ingestStream: StreamSpec<IngestStreamMessage> = {
  key: "ingest",
  name: (t) => t.ingestStream,
  subjects: (t) => [`${t.subjectPrefix}ingest.>`],
  // `ingest.<kind>.<lane>` (`ingest.batch.<lane>` for a batch); `ingest.<kind>` (before lanes, replays of older dead letters, operators)
  // is still consumed, by the unlaned consumer.
  subjectOf: (t, m) => `${t.subjectPrefix}ingest.${m.kind}.${laneToken(laneOf(m.tenantId))}`,
  duplicateWindowMs: INGEST_DUPLICATE_WINDOW_MS,
  maxAgeMs: 7 * DAY,
  // The same schema, storability rules and timestamp normalisation ingest applies at the HTTP
  // edge (shared/ingest-rules.ts): what ingest accepted always decodes here. A message ingest
  // marked as checked by these rules (ingestCheckedHeaders) gets only the shape check: its body
  // passed the full rules once, at the edge; any other publisher's gets them all. A batch's
  // items are checked one by one, as the messages they stand for (shared/ingest-batch.ts).
  codec: checkedJsonCodec<IngestStreamMessage>((value, headers) => {
    const checked = headers?.get(INGEST_CHECKED_HEADER) === INGEST_CHECKED;
    if (isBatch(value)) return ingestBatchProblem(value, checked);
    return checked ? ingestMessageShapeProblem(value) : ingestMessageProblem(value);
  }, tenantField),
  consumer: {
    // Lanes `processor-ingest-00` .. `-15`, and `processor-ingest` for the subjects without a lane.
    durable: "processor-ingest",
    ackWaitMs: 30 * SECOND,
    // Divided among the lanes (625 per consumer).
    maxAckPending: 10_000,
    maxDeliver: 5,
    backoffMs: [1 * SECOND, 5 * SECOND, 30 * SECOND, 2 * MINUTE],
    mode: "batch",
    deadLetterLogLevel: "error",
    lanes: {
      count: LANE_COUNT,
      filter: (t, lane) => `${t.subjectPrefix}ingest.*.${lane}`,
      unlaned: { filter: (t) => `${t.subjectPrefix}ingest.*` },
    },
  },
};

/**
 * The headers ingest publishes each message with: its body passed every rule of
 * shared/ingest-rules.ts at the edge (a fresh object per message: the client adds Nats-Msg-Id).
 */
export function ingestCheckedHeaders(door?: string): MsgHdrs {
  const h = natsHeaders();
  h.set(INGEST_CHECKED_HEADER, INGEST_CHECKED);
  if (door) h.set(INGEST_DOOR_HEADER, door);
  return h;
}

/** The ingest door a message came through (docs/ledger.md: the reconciliation recounts `accepted` by it). */
export const INGEST_DOOR_HEADER = "Cellar-Door";

/** A MATURED body checked against its type's schema (a union's error would not name the field). */
const maturedValidators = {
  maturation: compileValidator(MaturedMessage),
  batch: compileValidator(MaturedBatch),
  monitor: compileValidator(MonitorEventMessage),
};
/** A batch's items are maturations of one type and of the batch's tenant: its subject, lane and fair slot are theirs. */
function batchProblem(batch: MaturedBatch): string | null {
  const type = batch.maturations[0].type;
  for (let i = 0; i < batch.maturations.length; i++) {
    if (batch.maturations[i].type !== type)
      return `invalid maturations[${i}].type: must be ${JSON.stringify(type)}, as maturations[0]`;
    if (batch.maturations[i].tenantId !== batch.tenantId)
      return `invalid maturations[${i}].tenantId: must be the batch's tenantId`;
  }
  return null;
}
const maturedCodec = checkedJsonCodec<MaturedStreamMessage>((v) => {
  const type = (v as { type?: unknown } | null)?.type;
  if (type === "monitor.triggered" || type === "monitor.resolved") return maturedValidators.monitor.firstError(v);
  if (type === "matured.batch") return maturedValidators.batch.firstError(v) ?? batchProblem(v as MaturedBatch);
  return maturedValidators.maturation.firstError(v);
}, tenantField);

/** The `<kind>` token of a MATURED subject (a batch goes where each of its maturations would). */
function maturedKind(m: MaturedStreamMessage): string {
  if (isMonitorEvent(m)) return "monitor";
  const type = m.type === "matured.batch" ? m.maturations[0].type : m.type;
  return type === "session.matured" ? "session" : "trace";
}

/**
 * MATURED: a session or trace settled, or a monitor's state changed (docs/monitors.md); the
 * dispatcher fans each out to subscriptions.
 */
export const maturedStream: StreamSpec<MaturedStreamMessage> = {
  key: "matured",
  name: (t) => t.maturedStream,
  subjects: (t) => [`${t.subjectPrefix}matured.>`],
  // `matured.<kind>.<lane>` (lanes.ts); `matured.<kind>` was the subject before lanes.
  subjectOf: (t, m) => `${t.subjectPrefix}matured.${maturedKind(m)}.${laneToken(laneOf(m.tenantId))}`,
  duplicateWindowMs: DAY,
  maxAgeMs: 7 * DAY,
  codec: maturedCodec,
  consumer: {
    // Lanes `dispatcher-matured-00` .. `-15`.
    durable: "dispatcher-matured",
    ackWaitMs: 30 * SECOND,
    // In all lanes together (625 per lane): messages in hand and failures waiting on a backoff.
    maxAckPending: 10_000,
    maxDeliver: 10,
    backoffMs: [1 * SECOND, 5 * SECOND, 30 * SECOND, 2 * MINUTE, 10 * MINUTE],
    mode: "each",
    lanes: {
      count: LANE_COUNT,
      filter: (t, lane) => `${t.subjectPrefix}matured.*.${lane}`,
      retired: {
        durable: "dispatcher-matured",
        subjects: (t) => [`${t.subjectPrefix}matured.session`, `${t.subjectPrefix}matured.trace`],
      },
    },
  },
};

/**
 * MATURED again, for the processor's overview rollups (apps/processor/src/rollups): a second
 * durable consumer on maturedStream's stream (which that spec creates), session maturations
 * only. Its handler recomputes a session's contribution, so redelivery and replay are harmless.
 */
export const maturedRollupsStream: StreamSpec<MaturedMessage[] | null> = {
  key: "maturedRollups",
  name: (t) => t.maturedStream,
  // An invalid message is the dispatcher's consumer's to dead-letter (one copy is enough): here it
  // decodes to null and is acked; so is a monitor event (not a maturation).
  codec: {
    decode: (subject, data, headers) => {
      const decoded = maturedCodec.decode(subject, data, headers);
      // Session maturations only (its filter subject), single or in a batch: anything else reads
      // as null and is acked.
      const sessions = decoded.ok ? maturationsOf(decoded.value).filter((m) => m.type === "session.matured") : [];
      return { ok: true, value: sessions.length ? sessions : null };
    },
    tenantOf: (v) => v?.[0]?.tenantId,
  },
  consumer: {
    durable: "processor-rollups",
    ackWaitMs: 30 * SECOND,
    maxAckPending: 1_000,
    maxDeliver: 10,
    backoffMs: [1 * SECOND, 5 * SECOND, 30 * SECOND, 2 * MINUTE, 10 * MINUTE],
    mode: "each",
    filterSubject: (t) => `${t.subjectPrefix}matured.session.>`,
  },
};

/**
 * The processor's monitor evaluation (apps/processor/src/monitors/): a second durable consumer
 * of MATURED, beside the dispatcher's lanes. It reads maturations only (monitor events on
 * `matured.monitor.*`, and invalid messages, are acked unread) and is idempotent: a sample per entity
 * and monitor, state changes under the monitor's row lock.
 */
export const monitorsConsumer: StreamSpec<MaturedStreamMessage | null> = {
  ...maturedStream,
  // An invalid message is the dispatcher's to dead-letter (once): here it decodes to null and
  // is acked, so a poison message is not parked twice and a replay is not read twice.
  codec: {
    decode: (subject, data, headers) => {
      const decoded = maturedCodec.decode(subject, data, headers);
      return decoded.ok ? decoded : { ok: true, value: null };
    },
    tenantOf: (v) => v?.tenantId,
  },
  consumer: {
    durable: "processor-monitors",
    ackWaitMs: 30 * SECOND,
    maxAckPending: 2_000,
    maxDeliver: 10,
    backoffMs: [1 * SECOND, 5 * SECOND, 30 * SECOND, 2 * MINUTE],
    mode: "each",
  },
};

/**
 * The dispatcher's evaluations (apps/dispatcher/src/evaluations/, docs/evaluations.md): a third
 * reader of MATURED, laned per tenant like the dispatcher's own consumer, so one tenant's slow or
 * failing judge holds only its lane's share of the in-flight budget and never another lane's
 * evaluations or webhooks. Invalid messages and monitor events decode to null and are acked (the
 * dispatcher's matured consumer parks the invalid ones, once). A judge's transient failure naks
 * with a delay (429 Retry-After honoured); the runner counts those deliveries itself.
 */
export const evaluationsConsumer: StreamSpec<MaturedStreamMessage | null> = {
  ...maturedStream,
  codec: {
    decode: (subject, data, headers) => {
      const decoded = maturedCodec.decode(subject, data, headers);
      return decoded.ok && !isMonitorEvent(decoded.value) ? decoded : { ok: true, value: null };
    },
    tenantOf: (v) => v?.tenantId,
  },
  consumer: {
    // Lanes `dispatcher-evaluations-00` .. `-15`.
    durable: "dispatcher-evaluations",
    // A judge call is bounded by its timeout (at most 120 s); the runtime's heartbeats keep a longer one.
    ackWaitMs: 60 * SECOND,
    // In all lanes together: messages in hand and judge retries waiting on their delay.
    maxAckPending: 4_000,
    maxDeliver: 10,
    backoffMs: [2 * SECOND, 10 * SECOND, 1 * MINUTE, 5 * MINUTE],
    mode: "each",
    lanes: { count: LANE_COUNT, filter: (t, lane) => `${t.subjectPrefix}matured.*.${lane}` },
  },
};

/** DELIVERIES: webhook attempts waiting on the retry curve (nak(delay) is the curve). */
export const deliveriesStream: StreamSpec<DeliveryJob> = {
  key: "deliveries",
  name: (t) => t.deliveriesStream,
  subjects: (t) => [`${t.subjectPrefix}deliveries.>`],
  // `deliveries.attempt.<lane>` by the delivery's tenant (lanes.ts); a job without one (published
  // before lanes, or by an older platform) takes the lane of its delivery id.
  subjectOf: (t, job) => `${t.subjectPrefix}deliveries.attempt.${laneToken(laneOf(job.tenantId ?? job.deliveryId))}`,
  duplicateWindowMs: DAY,
  // Retries span ~52 hours; keep messages well past the last attempt.
  maxAgeMs: 4 * DAY,
  codec: jsonCodec(DeliveryJob, tenantField),
  consumer: {
    // Lanes `dispatcher-deliveries-00` .. `-15`.
    durable: "dispatcher-deliveries",
    ackWaitMs: 60 * SECOND,
    // Every delivery waiting on a retry delay holds a slot (nats-notes.md): 12,500 per lane, so
    // one tenant's waiting retries fill its own lane, never another lane's (docs/webhooks.md).
    maxAckPending: 200_000,
    // The retry curve (9 attempts) and crowded-endpoint naks are deliveries too; this counts
    // only toward failures of the handler itself.
    maxDeliver: 100,
    backoffMs: [5 * SECOND, 30 * SECOND, 2 * MINUTE, 10 * MINUTE],
    mode: "each",
    lanes: {
      count: LANE_COUNT,
      filter: (t, lane) => `${t.subjectPrefix}deliveries.attempt.${lane}`,
      retired: { durable: "dispatcher-deliveries", subjects: (t) => [`${t.subjectPrefix}deliveries.attempt`] },
    },
  },
};

/**
 * The activity KV bucket's stream: expiry markers are the maturation signal (nats-notes.md).
 * Laned by tenant like INGEST (issue 41): keys are `<kind>.<lane>.<pk>`
 * (apps/processor/src/maturation/activity.ts) and each lane has its own marker consumer, so one
 * tenant's maturation backlog waits in its own lane while the processor matures every busy lane's
 * markers in turn (docs/maturation.md, "Tenant lanes").
 */
export const activityStream: StreamSpec<ActivityKey> = {
  key: "activity",
  name: (t) => `KV_${t.activityBucket}`,
  codec: {
    decode: (subject, _data, headers) => ({ ok: true, value: { subject, headers } }),
  },
  consumer: {
    // Lanes `processor-activity-00` .. `-15`, and `processor-activity` for keys written before lanes.
    durable: "processor-activity",
    // Short: on the KV stream some nak'd markers were seen to come back only after ack_wait
    // (docs/maturation.md); a replay of a marker being worked on is harmless (row locks).
    ackWaitMs: 20 * SECOND,
    // Divided among the lanes (625 per consumer).
    maxAckPending: 10_000,
    maxDeliver: 50,
    backoffMs: [2 * SECOND, 10 * SECOND, 1 * MINUTE],
    mode: "batch",
    lanes: {
      count: LANE_COUNT,
      filter: (t, lane) => `$KV.${t.activityBucket}.*.${lane}.*`,
      // `<kind>.<pk>`: the keys of before lanes, and what an older processor puts during an upgrade.
      unlaned: { filter: (t) => `$KV.${t.activityBucket}.*.*` },
    },
  },
};

/**
 * DEAD_LETTERS: messages a consumer gave up on, body unchanged, the original subject, headers,
 * error and delivery count in `Cellar-DL-*` headers (dead-letters.ts). Kept 30 days, at most
 * 1 GiB (oldest dropped first): an operator inspects and replays with `admin dead-letters`.
 */
export const deadLetterStream: StreamSpec<never> = {
  key: "deadLetters",
  name: (t) => t.deadLetterStream,
  subjects: (t) => [`${t.subjectPrefix}deadletter.>`],
  maxAgeMs: 30 * DAY,
  maxBytes: 1024 * 1024 * 1024,
  duplicateWindowMs: 10 * MINUTE,
  codec: { decode: () => ({ ok: false, error: "dead letters are not consumed" }) },
};

/** A dead letter as the ledger's consumer reads it: its body and headers (`Cellar-DL-*`), undecoded. */
export interface StoredDeadLetter {
  data: Uint8Array;
  headers: MsgHdrs | undefined;
}

/**
 * The ledger's count of INGEST's dead letters (apps/processor/src/ledger/dead-letters.ts): a
 * durable consumer of DEAD_LETTERS (`deadletter.ingest` only) that counts each dead letter once
 * by its sequence in DEAD_LETTERS, in the transaction that records it (docs/ledger.md, "Dead
 * letters, counted from DEAD_LETTERS"). Every message decodes (nothing here is dead-lettered for
 * its content); a count that cannot be written is retried (transient) like any Postgres write.
 */
export const deadLetterLedgerConsumer: StreamSpec<StoredDeadLetter> = {
  ...deadLetterStream,
  subjects: undefined, // DEAD_LETTERS is created by deadLetterStream
  codec: {
    decode: (_subject, data, headers) => ({ ok: true, value: { data, headers } }),
    tenantOf: (v) => v.headers?.get("Cellar-DL-Tenant") || undefined,
  },
  consumer: {
    durable: "processor-ledger",
    // Short: a dead letter in hand when its processor was killed is counted by another within
    // this, and a replay or purge waits for that count (dead-letters.ts, ledgerCounted). Counting
    // again is harmless (idempotent by sequence).
    ackWaitMs: 10 * SECOND,
    maxAckPending: 1_000,
    maxDeliver: 10,
    backoffMs: [1 * SECOND, 5 * SECOND, 30 * SECOND],
    mode: "batch",
    filterSubject: (t) => `${t.subjectPrefix}deadletter.${ingestStream.key}`,
  },
};

/** Every stream, in creation order. */
export const CATALOGUE: readonly StreamSpec<any>[] = [
  ingestStream,
  maturedStream,
  maturedRollupsStream,
  monitorsConsumer,
  evaluationsConsumer,
  deliveriesStream,
  activityStream,
  deadLetterStream,
  deadLetterLedgerConsumer,
];
