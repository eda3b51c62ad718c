import type postgres from "postgres";
import type { IngestKindRules } from "@cellar/shared/ingest-rules";
import type { IngestMessage } from "@cellar/shared/payloads";
import type { Counted, LedgerWrite, Settled } from "./stored.ts";

/** The types of the message-kind registry (kinds.ts), apart so the kinds' writers can name them. */
export type IngestKind = IngestMessage["kind"];
export type MessageOf<K extends IngestKind> = Extract<IngestMessage, { kind: K }>;

/**
 * What storing a message of the kind does to maturation (docs/maturation.md):
 * - `opens-trace`: a new row is a trace pending maturation (its pending row, the write's batch
 *   key) and activity of its session (reopens it, moves its clocks);
 * - `session-activity`: a new row is activity of its session only;
 * - `none`: not activity; it neither opens nor delays a maturation (scores).
 */
export type MaturationEffect = "opens-trace" | "session-activity" | "none";

export type Tx = postgres.TransactionSql;

/** A message of a session-bound kind with its service and session rows, as the seeding stage found them. */
export interface Placed<M> {
  message: M;
  servicePk: string;
  sessionPk: string;
}

/** What a session-bound kind's insert found: the activity of its really-new rows, and what follows. */
export interface KindInsert {
  /** Per really-new row: its session and its instants (epoch ms). */
  activity: Array<{ sessionPk: string; first: number; last: number }>;
  /** Rows that depend on the new rows' keys (issued first in the settle stage, pipelined). */
  followUp?(tx: Tx): Promise<unknown>;
  /** Of the rows that were only replayed, the entities still pending (their keys are refreshed); issued last. */
  stillActive?(tx: Tx): Promise<Array<{ id: string; tenant_id: string }>>;
  /**
   * Per placed message, in order, what the write did with it (stored.ts): at once when every
   * row was new, else after one lookup of the rows that were already there.
   */
  settled(tx: Tx): Settled[] | Promise<Settled[]>;
}

export interface WriteOptions {
  /** Payloads of at least this many bytes of JSON get a session digest (default DIGEST_MIN_JSON_BYTES). */
  digestMinJsonBytes?: number;
  /** Count `stored` (and `replayed`) in the write's own transaction, with the rows (docs/ledger.md). */
  ledger?: LedgerWrite;
}

/** How a kind's messages are stored. */
export type KindWriter<M> =
  /** In a transaction of their own, before the session-bound kinds (scores: no session row). */
  | { stage: "alone"; write(sql: postgres.Sql, messages: M[], ledger?: LedgerWrite): Promise<Counted> }
  /** Rows of a session, in the write's one transaction: seeded session, one multi-row insert. */
  | {
      stage: "session";
      /** The instant the message's session row is seeded at (when it is the first of its session). */
      seedAt(message: M): string;
      /** Issues the kind's insert at once (the statements of all kinds go out pipelined). */
      insert(tx: Tx, placed: Placed<M>[], opts: WriteOptions): Promise<KindInsert>;
    };

export interface MessageKind<K extends IngestKind> {
  kind: K;
  /** Its rules (shared/ingest-rules.ts), as the INGEST codec applies them. */
  rules: IngestKindRules;
  writer: KindWriter<MessageOf<K>>;
  maturation: MaturationEffect;
}
