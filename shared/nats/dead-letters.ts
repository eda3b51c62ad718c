import {
  JetStreamApiCodes,
  JetStreamApiError,
  type JetStreamClient,
  type JetStreamManager,
  type JsMsg,
  type StoredMsg,
} from "@nats-io/jetstream";
import { headers as newHeaders, type MsgHdrs } from "@nats-io/transport-node";
import {
  CATALOGUE,
  deadLetterLedgerConsumer,
  deadLetterStream,
  type StoredDeadLetter,
  type StreamSpec,
} from "./catalogue.ts";
import { laneOf, laneToken } from "./lanes.ts";
import type { Topology } from "./topology.ts";

/** Headers a dead letter carries beside the original body (docs/dead-letters.md). */
export const DL = {
  stream: "Cellar-DL-Stream",
  subject: "Cellar-DL-Subject",
  seq: "Cellar-DL-Seq",
  deliveries: "Cellar-DL-Deliveries",
  error: "Cellar-DL-Error",
  tenant: "Cellar-DL-Tenant",
  at: "Cellar-DL-At",
  /** The original headers as JSON `{name: [values]}` (Nats-Msg-Id included): replay restores them. */
  headers: "Cellar-DL-Headers",
  /** Set on a replayed message (the dead letter's seq): the ledger counts it replayed when it is settled. */
  replayOf: "Cellar-Replay-Of",
  /**
   * Set on every dead letter this release writes: the ledger counts an INGEST dead letter from
   * DEAD_LETTERS (processor-ledger) only when it carries it. A dead letter of an older release,
   * which counted it in memory as it wrote it, is not counted again after an upgrade.
   */
  ledger: "Cellar-DL-Ledger",
  /**
   * When JetStream stored the original message in its stream (ISO): with the message id
   * (`<stream>:<seq>[:<item>]`), the original's identity, by which the ledger counts a dead
   * letter once however often that message is set aside (docs/ledger.md).
   */
  originAt: "Cellar-DL-Origin-At",
} as const;

export const deadLetterSubject = (t: Topology, spec: StreamSpec<unknown>) => `${t.subjectPrefix}deadletter.${spec.key}`;

function headersToJson(h: MsgHdrs | undefined): Record<string, string[]> {
  const out: Record<string, string[]> = {};
  if (!h) return out;
  for (const k of h.keys()) out[k] = h.values(k);
  return out;
}

/** Header values cannot hold CR/LF; errors and tenants are bounded so a dead letter stays small. */
const headerValue = (s: string, max = 1000) => s.replace(/[\r\n]+/g, " ").slice(0, max);

/**
 * A part of a message stored as a dead letter of its own (an item of an INGEST batch): its body,
 * the subject it would have had alone, and its headers.
 */
export interface DeadLetterPart {
  index: number;
  subject: string;
  data: Uint8Array;
  headers: MsgHdrs | undefined;
}

/**
 * Stores `m` (or one `part` of it) in DEAD_LETTERS and resolves once JetStream has it (the caller
 * acks the original only then). The message id is the original stream and sequence (and the
 * part's index): a crash between this publish and the ack stores one dead letter, not two.
 */
export async function writeDeadLetter(
  js: JetStreamClient,
  t: Topology,
  spec: StreamSpec<unknown>,
  m: JsMsg,
  info: { error: string; tenant?: string },
  part?: DeadLetterPart,
): Promise<void> {
  const h = newHeaders();
  h.set(DL.stream, spec.name(t));
  h.set(DL.subject, part?.subject ?? m.subject);
  h.set(DL.seq, String(m.seq));
  h.set(DL.deliveries, String(m.info.deliveryCount));
  h.set(DL.error, headerValue(info.error));
  if (info.tenant) h.set(DL.tenant, headerValue(info.tenant, 200));
  h.set(DL.at, new Date().toISOString());
  h.set(DL.headers, JSON.stringify(headersToJson(part ? part.headers : m.headers)));
  h.set(DL.ledger, "1");
  const originMs = Math.floor(Number(m.info?.timestampNanos) / 1e6);
  if (Number.isFinite(originMs)) h.set(DL.originAt, new Date(originMs).toISOString());
  await js.publish(deadLetterSubject(t, spec), part?.data ?? m.data, {
    headers: h,
    msgID: part ? `${spec.name(t)}:${m.seq}:${part.index}` : `${spec.name(t)}:${m.seq}`,
    timeout: 10_000,
  });
}

export interface DeadLetter {
  /** Sequence in DEAD_LETTERS: what `show`, `replay` and `purge` take. */
  seq: number;
  stream: string;
  subject: string;
  originalSeq: number;
  deliveries: number;
  error: string;
  tenant: string | null;
  at: string;
  headers: Record<string, string[]>;
  body: string;
}

function toDeadLetter(m: StoredMsg): DeadLetter {
  const h = m.header;
  let original: Record<string, string[]> = {};
  try {
    original = JSON.parse(h.get(DL.headers) || "{}");
  } catch {}
  return {
    seq: m.seq,
    stream: h.get(DL.stream),
    subject: h.get(DL.subject),
    originalSeq: Number(h.get(DL.seq)),
    deliveries: Number(h.get(DL.deliveries)),
    error: h.get(DL.error),
    tenant: h.get(DL.tenant) || null,
    at: h.get(DL.at),
    headers: original,
    body: new TextDecoder().decode(m.data),
  };
}

/** The stream spec a catalogue key or stream name refers to (`ingest`, `INGEST`, `t1_INGEST`). */
export function specFor(t: Topology, nameOrKey: string): StreamSpec<unknown> | undefined {
  const k = nameOrKey.toLowerCase();
  return CATALOGUE.find(
    (s) => s.key.toLowerCase() === k || s.name(t).toLowerCase() === k || s.name(t).toLowerCase().endsWith(`_${k}`),
  );
}

/** Which dead letters a listing or a replay takes (every filter optional; all must match). */
export interface DeadLetterFilter {
  /** The origin stream: a catalogue key (`ingest`) or its stream name. */
  stream?: string;
  /** The tenant the dead letter was recorded with (`Cellar-DL-Tenant`). */
  tenant?: string;
  /** Text the recorded reason contains (`Cellar-DL-Error`), e.g. `has the wrong type`. */
  reasonContains?: string;
}

/**
 * Dead letters in sequence order, from `fromSeq`, that match `filter`; at most `limit` (default
 * 100) and at most `maxScanned` stored messages read (default 100,000).
 */
export async function listDeadLetters(
  jsm: JetStreamManager,
  t: Topology,
  opts: DeadLetterFilter & { limit?: number; fromSeq?: number; maxScanned?: number } = {},
): Promise<DeadLetter[]> {
  const limit = opts.limit ?? 100;
  const letters: DeadLetter[] = [];
  if (limit <= 0) return letters;
  await scanDeadLetters(jsm, t, opts, (dl) => letters.push(dl) < limit);
  return letters;
}

/**
 * Visits the dead letters that match `filter` in sequence order, from `fromSeq`, until `visit`
 * returns false or `maxScanned` stored messages were read (default 100,000: bounded however many
 * there are; `truncated` then says the stream goes on). Nothing is kept between visits. With a
 * stream the server skips to that stream's next dead letter (`next_by_subj`), so other streams'
 * dead letters cost nothing.
 */
export async function scanDeadLetters(
  jsm: JetStreamManager,
  t: Topology,
  opts: DeadLetterFilter & { fromSeq?: number; maxScanned?: number },
  visit: (dl: DeadLetter) => boolean,
): Promise<{ truncated: boolean }> {
  const spec = opts.stream ? specFor(t, opts.stream) : undefined;
  // A stream name as the dead letters record it (an unknown one matches nothing it names).
  const origin = opts.stream ? (spec?.name(t) ?? opts.stream) : undefined;
  const nextBySubject = spec ? deadLetterSubject(t, spec) : undefined;
  const name = deadLetterStream.name(t);
  const info = await jsm.streams.info(name);
  const maxScanned = opts.maxScanned ?? 100_000;
  if (info.state.messages === 0) return { truncated: false };
  let seq = Math.max(info.state.first_seq, opts.fromSeq ?? 1, 1);
  for (let scanned = 0; seq <= info.state.last_seq; scanned++) {
    if (scanned >= maxScanned) return { truncated: true };
    // The server's next message on the subject at or after seq (the client's type lacks it).
    const query = (nextBySubject ? { seq, next_by_subj: nextBySubject } : { seq }) as { seq: number };
    const m = await jsm.streams.getMessage(name, query);
    if (!m) {
      if (nextBySubject) break; // none left on the subject
      seq++;
      continue; // deleted (replayed or purged)
    }
    // Dead letters stored after the scan began (a replay that failed again) wait for the next scan.
    if (m.seq > info.state.last_seq) break;
    seq = m.seq + 1;
    const dl = toDeadLetter(m);
    if (origin && dl.stream !== origin) continue;
    if (opts.tenant !== undefined && dl.tenant !== opts.tenant) continue;
    if (opts.reasonContains && !dl.error.includes(opts.reasonContains)) continue;
    if (!visit(dl)) break;
  }
  return { truncated: false };
}

export async function getDeadLetter(jsm: JetStreamManager, t: Topology, seq: number): Promise<DeadLetter | null> {
  const m = await jsm.streams.getMessage(deadLetterStream.name(t), { seq });
  return m ? toDeadLetter(m) : null;
}

/** One dead letter as DEAD_LETTERS stores it: what the ledger counts it by (CountBeforeDelete). */
export interface StoredLetter {
  seq: number;
  /** When DEAD_LETTERS stored it (ms; what processor-ledger's delivery says). */
  storedMs: number;
  value: StoredDeadLetter;
}

/**
 * Counts INGEST dead letters in the ledger before a replay or a purge deletes them, idempotently
 * by each one's key (shared/ledger/dead-letters.ts countBeforeDelete): given, a replay or purge
 * no longer waits for `processor-ledger` (ledgerCounted), so one deleted while no processor runs
 * is counted too. A throw deletes nothing.
 */
export type CountBeforeDelete = (letters: StoredLetter[]) => Promise<void>;

function storedLetter(m: StoredMsg): StoredLetter {
  // Milliseconds of the RFC 3339 nanosecond timestamp, cut (not rounded) as processor-ledger's are.
  const storedMs = Date.parse(m.timestamp.replace(/(\.\d{3})\d+/, "$1"));
  return { seq: m.seq, storedMs, value: { data: m.data, headers: m.header } };
}

export type ReplayResult = {
  seq: number;
  /** `uncounted`: kept, the ledger has not counted it yet (no processor ran since it was set aside). */
  status: "replayed" | "duplicate" | "missing" | "uncounted";
  stream?: string;
  subject?: string;
};

/**
 * Publishes a dead letter back to its original subject with its original headers and message
 * id, then deletes it. If the origin stream still remembers that id (its duplicate window) the
 * publish is dropped as a duplicate: the dead letter is kept and `duplicate` reported, unless
 * `newId` asks for a fresh id (`<original>:replay:<seq>`, still one per dead letter).
 */
export async function replayDeadLetter(
  js: JetStreamClient,
  jsm: JetStreamManager,
  t: Topology,
  seq: number,
  opts: { newId?: boolean; countWaitMs?: number; count?: CountBeforeDelete } = {},
): Promise<ReplayResult> {
  const m = await jsm.streams.getMessage(deadLetterStream.name(t), { seq });
  if (!m) return { seq, status: "missing" };
  const dl = toDeadLetter(m);
  if (opts.count) await opts.count([storedLetter(m)]);
  else if (!(await ledgerCounted(jsm, t, seq, opts.countWaitMs))) return { seq, status: "uncounted" };
  const h = newHeaders();
  let msgID: string | undefined;
  for (const [k, values] of Object.entries(dl.headers)) {
    if (k.toLowerCase() === "nats-msg-id") msgID = values[0];
    else for (const v of values) h.append(k, v);
  }
  if (opts.newId) msgID = `${msgID ?? `${dl.stream}:${dl.originalSeq}`}:replay:${seq}`;
  h.set(DL.replayOf, String(seq));
  const subject = replaySubject(t, dl);
  const ack = await js.publish(subject, new TextEncoder().encode(dl.body), { headers: h, msgID, timeout: 10_000 });
  if (ack.duplicate) return { seq, status: "duplicate", stream: dl.stream, subject };
  await jsm.streams.deleteMessage(deadLetterStream.name(t), seq, false);
  return { seq, status: "replayed", stream: ack.stream, subject };
}

/**
 * Where a dead letter goes back to: its own subject, except one from before tenant lanes (a
 * subject of the retired consumer, which may be gone): then its lane's subject, from its body
 * when it decodes, else from the tenant it was recorded with.
 */
function replaySubject(t: Topology, dl: DeadLetter): string {
  const spec = specFor(t, dl.stream);
  const retired = spec?.consumer?.lanes?.retired;
  if (!spec || !retired || !retired.subjects(t).includes(dl.subject)) return dl.subject;
  const decoded = spec.codec.decode(dl.subject, new TextEncoder().encode(dl.body), undefined);
  if (decoded.ok && spec.subjectOf) return spec.subjectOf(t, decoded.value);
  return `${dl.subject}.${laneToken(laneOf(dl.tenant ?? ""))}`;
}

/** How long a replay or a purge waits for the ledger to count what it would delete (ledgerCounted). */
const COUNT_WAIT_MS = 15_000;
/** A ledger consumer no processor pulled for this long is not waited for (ledgerCounted). */
const IDLE_MS = 10 * 60_000;

/**
 * Whether the ledger has counted every INGEST dead letter up to `seq` (all of them: Infinity):
 * the processor's `processor-ledger` consumer, which counts them from this stream one batch at a
 * time, has acknowledged past it or has nothing left (docs/ledger.md, "Dead letters, counted from DEAD_LETTERS"). A dead letter
 * deleted (replayed, purged) before it was counted would never be. Waits up to `waitMs` for it;
 * true when there is no such consumer (a topology from before it: nothing counts from here) or
 * no processor consumes it (none waiting on it, none took a message for 10 minutes: waiting
 * would not help, and what is deleted uncounted the reconciliation reports as not dead-lettered).
 */
export async function ledgerCounted(
  jsm: JetStreamManager,
  t: Topology,
  seq: number,
  waitMs = COUNT_WAIT_MS,
): Promise<boolean> {
  const durable = deadLetterLedgerConsumer.consumer!.durable;
  const deadline = Date.now() + waitMs;
  for (;;) {
    let counted: boolean;
    try {
      const c = await jsm.consumers.info(t.deadLetterStream, durable);
      // No processor has consumed it for 10 minutes and none is waiting on it: nothing would
      // count it now (the reconciliation reports what was never counted; docs/ledger.md).
      const lastActive = Date.parse(String(c.delivered.last_active ?? ""));
      const consumed = c.num_waiting > 0 || (Number.isFinite(lastActive) && Date.now() - lastActive < IDLE_MS);
      counted = !consumed || c.ack_floor.stream_seq >= seq || c.num_pending + c.num_ack_pending === 0;
    } catch (err) {
      if (err instanceof JetStreamApiError && err.code === JetStreamApiCodes.ConsumerNotFound) return true;
      throw err;
    }
    if (counted) return true;
    if (Date.now() >= deadline) return false;
    await new Promise((r) => setTimeout(r, 200));
  }
}

/** A purge refused because the ledger has not counted what it would delete yet. */
export class UncountedDeadLettersError extends Error {
  override name = "UncountedDeadLettersError";
}

/**
 * Deletes one dead letter (seq), those of one origin stream, or all. Returns how many. With
 * `count`, the INGEST ones are counted first (CountBeforeDelete), and a purge of a stream or of
 * all deletes only what it counted (those stored since wait for the next purge). Without it, what
 * the ledger has not counted yet is not deleted: the purge waits for it (ledgerCounted), then
 * throws UncountedDeadLettersError.
 */
export async function purgeDeadLetters(
  jsm: JetStreamManager,
  t: Topology,
  what: { seq?: number; stream?: string; countWaitMs?: number; count?: CountBeforeDelete } = {},
): Promise<number> {
  const name = deadLetterStream.name(t);
  const ingestOnes = !what.stream || specFor(t, what.stream)?.name(t) === t.ingestStream;
  let below: number | undefined;
  if (ingestOnes && what.count) below = await countIngestLetters(jsm, t, what.seq, what.count);
  else if (ingestOnes && !(await ledgerCounted(jsm, t, what.seq ?? Number.POSITIVE_INFINITY, what.countWaitMs)))
    throw new UncountedDeadLettersError(
      "the ledger has not counted these dead letters yet (is a processor running?): try again once it has",
    );
  if (what.seq !== undefined) {
    try {
      return (await jsm.streams.deleteMessage(name, what.seq, false)) ? 1 : 0;
    } catch (err) {
      if (err instanceof JetStreamApiError && err.code === JetStreamApiCodes.NoMessageFound) return 0;
      throw err;
    }
  }
  if (what.stream) {
    const spec = specFor(t, what.stream);
    if (!spec) throw new Error(`unknown stream ${JSON.stringify(what.stream)}`);
    const filter = deadLetterSubject(t, spec);
    return (await jsm.streams.purge(name, below === undefined ? { filter } : { filter, seq: below })).purged;
  }
  return (await jsm.streams.purge(name, below === undefined ? undefined : { seq: below })).purged;
}

/**
 * Counts the INGEST dead letter `seq` (one of another stream counts nothing), or every INGEST dead
 * letter stored so far, 500 at a time; returns the sequence below which all are counted.
 */
async function countIngestLetters(
  jsm: JetStreamManager,
  t: Topology,
  seq: number | undefined,
  count: CountBeforeDelete,
): Promise<number> {
  const name = deadLetterStream.name(t);
  if (seq !== undefined) {
    const m = await jsm.streams.getMessage(name, { seq });
    if (m) await count([storedLetter(m)]);
    return seq + 1;
  }
  const last = (await jsm.streams.info(name)).state.last_seq;
  const subject = deadLetterSubject(t, specFor(t, t.ingestStream)!);
  let chunk: StoredLetter[] = [];
  for (let next = 1; next <= last; ) {
    // The server's next message on the subject at or after `next` (the client's type lacks it).
    const m = await jsm.streams.getMessage(name, { seq: next, next_by_subj: subject } as { seq: number });
    if (!m || m.seq > last) break;
    chunk.push(storedLetter(m));
    next = m.seq + 1;
    if (chunk.length === 500) {
      await count(chunk);
      chunk = [];
    }
  }
  if (chunk.length) await count(chunk);
  return last + 1;
}
