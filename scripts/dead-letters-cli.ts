import { connectNats, createTopology, ensureTopology, type Topology } from "@cellar/shared/nats/topology";
import { natsClientOptions, natsSettingsFromEnv } from "@cellar/shared/deploy/nats";
import {
  type CountBeforeDelete,
  getDeadLetter,
  listDeadLetters,
  purgeDeadLetters,
  UncountedDeadLettersError,
  replayDeadLetter,
  specFor,
  type DeadLetterFilter,
  type ReplayResult,
} from "@cellar/shared/nats/dead-letters";

export const DEAD_LETTERS_USAGE = `  dead-letters list [--stream ingest|matured|deliveries|activity] [--tenant T] [--reason TEXT] [--limit N] [--from SEQ]
  dead-letters show --seq N
  dead-letters replay --seq N [--new-id] | --all [--stream S] [--tenant T] [--reason TEXT] [--new-id]
  dead-letters purge --seq N | --stream S | --all`;

export interface DeadLetterArgs {
  seq?: string;
  stream?: string;
  limit?: string;
  from?: string;
  all?: boolean;
  newId?: boolean;
  /** Only the dead letters of this tenant (list, replay --all). */
  tenant?: string;
  /** Only dead letters whose recorded reason contains this text (list, replay --all). */
  reason?: string;
  /** Stream-name namespace (tests, side-by-side installs); production uses none. */
  namespace?: string;
}

/** Bad input: the CLI prints it and exits non-zero. */
export class DeadLetterUsageError extends Error {}

const positive = (name: string, v: string | undefined): number | undefined => {
  if (v === undefined) return undefined;
  if (!/^[1-9]\d{0,15}$/.test(v)) throw new DeadLetterUsageError(`--${name} must be a positive integer`);
  return Number(v);
};

/**
 * `npm run admin -- dead-letters <action>` (docs/dead-letters.md): inspect, replay and purge
 * the DEAD_LETTERS stream. Connects to NATS, and to Postgres (`countWith`) to count what a replay
 * or purge deletes; returns what the CLI prints as JSON.
 */
export async function runDeadLetters(
  action: string,
  args: DeadLetterArgs,
  natsUrl: string,
  /** Counts INGEST dead letters before a replay or purge deletes them (admin.ts gives it when it has a database). */
  countWith?: (t: Topology) => CountBeforeDelete,
): Promise<unknown> {
  const topology = createTopology(args.namespace ?? "");
  if (
    args.stream &&
    !["ingest", "matured", "deliveries", "activity"].includes(specFor(topology, args.stream)?.key ?? "")
  ) {
    throw new DeadLetterUsageError("--stream must be ingest, matured, deliveries or activity");
  }
  const seq = positive("seq", args.seq);
  // As the operator's NATS user when NATS_USER / NATS_PASSWORD are set (deploy/nats/users.conf: admin).
  const nc = await connectNats(natsUrl, "cellar-admin", {
    maxReconnectAttempts: 0,
    ...natsClientOptions(natsSettingsFromEnv(natsUrl)),
  });
  const count = countWith?.(topology);
  try {
    const { js, jsm } = await ensureTopology(nc, topology);
    const filter: DeadLetterFilter = { stream: args.stream, tenant: args.tenant, reasonContains: args.reason };
    switch (action) {
      case "list": {
        const letters = await listDeadLetters(jsm, topology, {
          ...filter,
          limit: positive("limit", args.limit) ?? 100,
          fromSeq: positive("from", args.from),
        });
        // The body can be large: `show` prints it.
        return { deadLetters: letters.map(({ body, headers: _h, ...rest }) => ({ ...rest, bytes: body.length })) };
      }
      case "show": {
        if (seq === undefined) throw new DeadLetterUsageError("--seq is required");
        const letter = await getDeadLetter(jsm, topology, seq);
        if (!letter) throw new DeadLetterUsageError(`no dead letter with seq ${seq}`);
        return letter;
      }
      case "replay": {
        let seqs: number[];
        if (seq !== undefined) seqs = [seq];
        else if (args.all)
          seqs = (await listDeadLetters(jsm, topology, { ...filter, limit: 100_000 })).map((d) => d.seq);
        else throw new DeadLetterUsageError("--seq or --all is required");
        const results: ReplayResult[] = [];
        for (const s of seqs) results.push(await replayDeadLetter(js, jsm, topology, s, { newId: args.newId, count }));
        if (seq !== undefined && results[0].status === "missing")
          throw new DeadLetterUsageError(`no dead letter with seq ${seq}`);
        return { replayed: results.filter((r) => r.status === "replayed").length, results };
      }
      case "purge": {
        if (seq === undefined && !args.stream && !args.all)
          throw new DeadLetterUsageError("--seq, --stream or --all is required");
        try {
          return { purged: await purgeDeadLetters(jsm, topology, { seq, stream: args.stream, count }) };
        } catch (err) {
          // Not counted by the ledger yet: nothing deleted, the operator tries again (docs/ledger.md).
          if (err instanceof UncountedDeadLettersError) throw new DeadLetterUsageError(err.message);
          throw err;
        }
      }
      default:
        throw new DeadLetterUsageError(`unknown command "dead-letters ${action}"`);
    }
  } finally {
    await nc.close();
  }
}
