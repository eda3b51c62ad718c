import type postgres from "postgres";
import type { LedgerCounter } from "@cellar/shared/ledger/counter";
import { countDeadLetters, deadLetterCount } from "@cellar/shared/ledger/dead-letters";
import type { StoredDeadLetter } from "@cellar/shared/nats/catalogue";
import type { Delivery, Outcome } from "@cellar/shared/nats/consume";
import type { Topology } from "@cellar/shared/nats/topology";

// Counting a dead letter lives in shared/ledger (a replay or a purge counts before it deletes, too).
export { countDeadLetters, deadLetterCount, type DeadLetterCount, originOf } from "@cellar/shared/ledger/dead-letters";

/**
 * The handler of the processor's `processor-ledger` consumer of DEAD_LETTERS (deadLetterLedgerConsumer):
 * counts each dead letter once (countDeadLetters) and acks. A Postgres failure throws: the
 * runtime keeps the batch and retries it (transient) or gives it back.
 */
export function deadLetterLedgerHandler(sql: postgres.Sql, t: Topology, ledger?: LedgerCounter) {
  return async (items: Delivery<StoredDeadLetter>[]): Promise<Outcome[]> => {
    const letters = items.map((d) =>
      deadLetterCount(t, d.msg.seq, Math.floor(d.msg.info.timestampNanos / 1e6), d.value),
    );
    for (const c of await countDeadLetters(sql, letters))
      ledger?.counted(c.stage as "dead_lettered" | "replayed" | "accepted", c.reason, c.n);
    return items.map(() => "ack");
  };
}
