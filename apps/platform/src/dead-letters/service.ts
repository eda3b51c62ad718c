import type { JetStreamClient, JetStreamManager } from "@nats-io/jetstream";
import { forbidden, notFound, serviceUnavailable } from "@cellar/shared/errors";
import {
  type CountBeforeDelete,
  getDeadLetter,
  replayDeadLetter,
  scanDeadLetters,
  type DeadLetter,
} from "@cellar/shared/nats/dead-letters";
import type { Topology } from "@cellar/shared/nats/topology";
import { hasRole, type Principal } from "../auth/principal.ts";

/** JetStream as the platform reaches DEAD_LETTERS (deploy/nats/users.conf, PLATFORM). */
export interface DeadLetterAccess {
  js: JetStreamClient;
  topology: Topology;
  /** How long a replay waits for the ledger to count a dead letter before its 503 (default 15 s, ledgerCounted). */
  countWaitMs?: number;
  /**
   * Counts a dead letter in the ledger before a replay deletes it (shared/ledger/dead-letters.ts
   * countBeforeDelete; main.ts gives it): then a replay never waits for a processor, and one made
   * while none runs is counted too. Without it a replay waits for `processor-ledger`'s count.
   */
  count?: CountBeforeDelete;
}

/**
 * Bounds of one request (every tenant is hostile to every other): a read lists at most
 * LISTED and reads at most SCANNED stored ingest dead letters of all tenants; a replay of
 * all takes at most REPLAYED_PER_CALL (call again while `more`).
 */
export const DEAD_LETTER_LIMITS = { LISTED: 100, SCANNED: 20_000, REPLAYED_PER_CALL: 500 } as const;

export interface DeadLetterView {
  seq: number;
  at: string;
  reason: string;
  deliveries: number;
  kind: string | null;
  serviceName: string | null;
  sessionId: string | null;
}

/** Only data a client was told is stored: the INGEST stream's dead letters. */
const INGEST = "ingest";

export function requireDeadLetterAdmin(p: Principal): void {
  if (!hasRole(p, "admin")) throw forbidden("dead letters need role admin or higher");
}

async function manager(access: DeadLetterAccess | undefined): Promise<JetStreamManager> {
  if (!access) throw serviceUnavailable("dead letters are unavailable: the platform has no NATS connection", 30);
  return access.js.jetstreamManager(false);
}

function view(dl: DeadLetter): DeadLetterView {
  let body: { kind?: unknown; serviceName?: unknown; payload?: { session_id?: unknown } } = {};
  try {
    body = JSON.parse(dl.body) ?? {};
  } catch {}
  const text = (v: unknown) => (typeof v === "string" ? v : null);
  return {
    seq: dl.seq,
    at: dl.at,
    reason: dl.error,
    deliveries: dl.deliveries,
    kind: text(body.kind),
    serviceName: text(body.serviceName),
    sessionId: text(body.payload?.session_id),
  };
}

/** The principal's tenant's ingest dead letters: how many, and the oldest LISTED of them. */
export async function listTenantDeadLetters(access: DeadLetterAccess | undefined, p: Principal) {
  requireDeadLetterAdmin(p);
  const jsm = await manager(access);
  const data: DeadLetterView[] = [];
  let count = 0;
  const { truncated } = await scanDeadLetters(
    jsm,
    access!.topology,
    { stream: INGEST, tenant: p.tenantId, maxScanned: DEAD_LETTER_LIMITS.SCANNED },
    (dl) => {
      count++;
      if (data.length < DEAD_LETTER_LIMITS.LISTED) data.push(view(dl));
      return true;
    },
  );
  return { count, truncated, data };
}

export type TenantReplay = { seq: number; status: "replayed" | "missing" };

/**
 * Replays one dead letter of the tenant. Within INGEST's duplicate window the original id is
 * still remembered, so a `duplicate` is sent again with a fresh id: the processor writes by
 * natural keys, so a call that did land is not stored twice (docs/dead-letters.md).
 */
async function replayOne(
  access: DeadLetterAccess,
  jsm: JetStreamManager,
  seq: number,
): Promise<TenantReplay | { seq: number; status: "uncounted" }> {
  const { countWaitMs, count } = access;
  const first = await replayDeadLetter(access.js, jsm, access.topology, seq, { countWaitMs, count });
  const result =
    first.status === "duplicate"
      ? await replayDeadLetter(access.js, jsm, access.topology, seq, { newId: true, countWaitMs, count })
      : first;
  if (result.status === "uncounted") return { seq, status: "uncounted" };
  return { seq, status: result.status === "missing" ? "missing" : "replayed" };
}

/** A dead letter the ledger has not counted yet is kept (docs/ledger.md): the caller tries again. */
const uncounted = () =>
  serviceUnavailable("the ledger has not counted this dead letter yet (is a processor running?): try again", 5);

/** `seq` when it is one of the tenant's ingest dead letters; another tenant's is a missing one (404). */
export async function replayTenantDeadLetter(access: DeadLetterAccess | undefined, p: Principal, seq: number) {
  requireDeadLetterAdmin(p);
  const jsm = await manager(access);
  const dl = await getDeadLetter(jsm, access!.topology, seq);
  const ingestStream = access!.topology.ingestStream;
  if (!dl || dl.tenant !== p.tenantId || dl.stream !== ingestStream) throw notFound("no such dead letter");
  const result = await replayOne(access!, jsm, seq);
  if (result.status === "missing") throw notFound("no such dead letter");
  if (result.status === "uncounted") throw uncounted();
  return { replayed: 1, more: false, results: [result] };
}

/** Up to REPLAYED_PER_CALL of the tenant's ingest dead letters, oldest first; `more` when some remain. */
export async function replayTenantDeadLetters(access: DeadLetterAccess | undefined, p: Principal) {
  requireDeadLetterAdmin(p);
  const jsm = await manager(access);
  const seqs: number[] = [];
  let more = false;
  const { truncated } = await scanDeadLetters(
    jsm,
    access!.topology,
    { stream: INGEST, tenant: p.tenantId, maxScanned: DEAD_LETTER_LIMITS.SCANNED },
    (dl) => {
      if (seqs.length === DEAD_LETTER_LIMITS.REPLAYED_PER_CALL) {
        more = true;
        return false;
      }
      seqs.push(dl.seq);
      return true;
    },
  );
  const results: TenantReplay[] = [];
  for (const seq of seqs) {
    const result = await replayOne(access!, jsm, seq);
    // Not counted yet: neither is any after it (counted in order); the rest wait for the next call.
    if (result.status === "uncounted") {
      if (results.length === 0) throw uncounted();
      more = true;
      break;
    }
    results.push(result);
  }
  return { replayed: results.filter((r) => r.status === "replayed").length, more: more || truncated, results };
}
