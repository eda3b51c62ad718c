import {
  JetStreamApiCodes,
  JetStreamApiError,
  type JetStreamClient,
  type JetStreamManager,
  type JsMsg,
  type StoredMsg,
} from "@nats-io/jetstream";
import { headers as newHeaders, type MsgHdrs } from "@nats-io/transport-node";
import { CATALOGUE, deadLetterStream, type StreamSpec } from "./catalogue.ts";
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
 * Stores `m` in DEAD_LETTERS and resolves once JetStream has it (the caller acks the original
 * only then). The message id is the original stream and sequence: a crash between this publish
 * and the ack stores one dead letter, not two.
 */
export async function writeDeadLetter(
  js: JetStreamClient,
  t: Topology,
  spec: StreamSpec<unknown>,
  m: JsMsg,
  info: { error: string; tenant?: string },
): Promise<void> {
  const h = newHeaders();
  h.set(DL.stream, spec.name(t));
  h.set(DL.subject, m.subject);
  h.set(DL.seq, String(m.seq));
  h.set(DL.deliveries, String(m.info.deliveryCount));
  h.set(DL.error, headerValue(info.error));
  if (info.tenant) h.set(DL.tenant, headerValue(info.tenant, 200));
  h.set(DL.at, new Date().toISOString());
  h.set(DL.headers, JSON.stringify(headersToJson(m.headers)));
  await js.publish(deadLetterSubject(t, spec), m.data, {
    headers: h,
    msgID: `${spec.name(t)}:${m.seq}`,
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

/** Dead letters in sequence order, from `fromSeq`, optionally of one origin stream. */
export async function listDeadLetters(
  jsm: JetStreamManager,
  t: Topology,
  opts: { stream?: string; limit?: number; fromSeq?: number } = {},
): Promise<DeadLetter[]> {
  // A catalogue key (`ingest`) or a stream name as the dead letters record it.
  const origin = opts.stream ? (specFor(t, opts.stream)?.name(t) ?? opts.stream) : undefined;
  const name = deadLetterStream.name(t);
  const info = await jsm.streams.info(name);
  const limit = opts.limit ?? 100;
  const out: DeadLetter[] = [];
  if (info.state.messages === 0) return out;
  for (
    let seq = Math.max(info.state.first_seq, opts.fromSeq ?? 1, 1);
    seq <= info.state.last_seq && out.length < limit;
    seq++
  ) {
    const m = await jsm.streams.getMessage(name, { seq });
    if (!m) continue; // deleted (replayed or purged)
    const dl = toDeadLetter(m);
    if (!origin || dl.stream === origin) out.push(dl);
  }
  return out;
}

export async function getDeadLetter(jsm: JetStreamManager, t: Topology, seq: number): Promise<DeadLetter | null> {
  const m = await jsm.streams.getMessage(deadLetterStream.name(t), { seq });
  return m ? toDeadLetter(m) : null;
}

export type ReplayResult = {
  seq: number;
  status: "replayed" | "duplicate" | "missing";
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
  opts: { newId?: boolean } = {},
): Promise<ReplayResult> {
  const dl = await getDeadLetter(jsm, t, seq);
  if (!dl) return { seq, status: "missing" };
  const h = newHeaders();
  let msgID: string | undefined;
  for (const [k, values] of Object.entries(dl.headers)) {
    if (k.toLowerCase() === "nats-msg-id") msgID = values[0];
    else for (const v of values) h.append(k, v);
  }
  if (opts.newId) msgID = `${msgID ?? `${dl.stream}:${dl.originalSeq}`}:replay:${seq}`;
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

/** Deletes one dead letter (seq), those of one origin stream, or all. Returns how many. */
export async function purgeDeadLetters(
  jsm: JetStreamManager,
  t: Topology,
  what: { seq?: number; stream?: string } = {},
): Promise<number> {
  const name = deadLetterStream.name(t);
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
    return (await jsm.streams.purge(name, { filter: deadLetterSubject(t, spec) })).purged;
  }
  return (await jsm.streams.purge(name)).purged;
}
