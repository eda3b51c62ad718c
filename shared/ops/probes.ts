import type { NatsConnection } from "@nats-io/transport-node";
import type { JetStreamManager } from "@nats-io/jetstream";
import type postgres from "postgres";
import type { Topology } from "../nats/topology.ts";
import {
  activityStream,
  deadLetterLedgerConsumer,
  consumersOf,
  deliveriesStream,
  evaluationsConsumer,
  ingestStream,
  maturedStream,
  type StreamSpec,
} from "../nats/catalogue.ts";
import { deadLetterSubject } from "../nats/dead-letters.ts";
import { isPermissionError, NatsAccessError } from "../deploy/nats.ts";
import { withTimeout } from "./metrics.ts";

export type AppName = "ingest" | "processor" | "dispatcher" | "platform";

export interface NatsNeeds {
  /** Streams it publishes to (their info is its readiness probe). */
  streams: string[];
  /** Durable consumers it pulls from (catalogue.ts). */
  consumers: Array<{ stream: string; name: string }>;
  /** Streams whose dead letters it writes, with the dead-letter subject: counted in /metrics. */
  deadLetters: Array<{ stream: string; subject: string }>;
}

/** What each app needs from JetStream, from the stream catalogue. */
export function natsNeeds(app: AppName, t: Topology): NatsNeeds {
  // A laned stream has one consumer per lane (catalogue.ts): each is checked and watched.
  const consumerOf = (spec: StreamSpec<any>) =>
    consumersOf(spec, t).map((c) => ({ stream: spec.name(t), name: c.durable }));
  const deadLettersOf = (spec: StreamSpec<any>) => ({ stream: spec.name(t), subject: deadLetterSubject(t, spec) });
  switch (app) {
    case "ingest":
      return { streams: [t.ingestStream], consumers: [], deadLetters: [] };
    case "platform":
      return { streams: [t.deliveriesStream], consumers: [], deadLetters: [] };
    case "processor":
      return {
        streams: [],
        // processor-ledger too: the ledger's dead letters are counted from DEAD_LETTERS (docs/ledger.md).
        consumers: [
          ...consumerOf(ingestStream),
          ...consumerOf(activityStream),
          ...consumerOf(deadLetterLedgerConsumer),
        ],
        deadLetters: [deadLettersOf(ingestStream)],
      };
    case "dispatcher":
      return {
        streams: [],
        // The evaluations runner's lanes too (docs/evaluations.md): a dispatcher whose judges
        // cannot read MATURED is not ready either.
        consumers: [...consumerOf(maturedStream), ...consumerOf(deliveriesStream), ...consumerOf(evaluationsConsumer)],
        deadLetters: [deadLettersOf(maturedStream), deadLettersOf(deliveriesStream)],
      };
  }
}

/**
 * Reads the info of every stream and consumer the app needs. At start a failure stops the app
 * with a message naming the user and what it may not read (deploy/nats/users.conf); in /ready
 * it makes the app not ready.
 */
export async function checkNatsNeeds(
  app: AppName,
  jsm: JetStreamManager,
  t: Topology,
  user: string,
  timeoutMs = 5_000,
): Promise<void> {
  const needs = natsNeeds(app, t);
  const who = user ? `NATS user "${user}"` : "this NATS connection";
  const hint = `the ${app} app runs as NATS_USER=${app} (deploy/nats/users.conf)`;
  const explain = (what: string, err: unknown): Error => {
    if (isPermissionError(err)) return new NatsAccessError(`${who} may not read ${what}: ${hint}`);
    if (/not found/i.test(String((err as Error)?.message)))
      return new NatsAccessError(
        `${what} does not exist: run the setup first (scripts/migrate.ts, the compose "migrate" service)`,
      );
    // Anything else (a timeout while a cluster elects leaders) is worth retrying at start.
    return new Error(`cannot read ${what}: ${String((err as Error)?.message ?? err)}`);
  };
  // All at once: a laned stream has 16 or 17 consumers, and one after another their round trips
  // add up past /ready's bound on a loaded machine (issue 41: dispatchers not ready for a minute).
  // Every answer is awaited, so a failure names all that did not answer, not only the first.
  const started = performance.now();
  const asks: Array<{ what: string; ask: () => Promise<unknown> }> = [
    ...[...needs.streams, ...(needs.deadLetters.length ? [t.deadLetterStream] : [])].map((stream) => ({
      what: `stream ${stream}`,
      ask: () => jsm.streams.info(stream),
    })),
    ...needs.consumers.map((c) => ({
      what: `consumer ${c.name} of stream ${c.stream}`,
      ask: () => jsm.consumers.info(c.stream, c.name),
    })),
  ];
  const settled = await Promise.allSettled(asks.map((a) => withTimeout(a.ask(), timeoutMs)));
  const failures = settled.flatMap((s, i) => (s.status === "rejected" ? [explain(asks[i].what, s.reason)] : []));
  if (!failures.length) return;
  const access = failures.find((e) => e instanceof NatsAccessError);
  if (access) throw access;
  const ms = Math.round(performance.now() - started);
  const named = failures.slice(0, 3).map((e) => e.message.replace(/^cannot read /, ""));
  throw new Error(
    `${failures.length} of ${asks.length} JetStream reads failed after ${ms} ms: ${named.join("; ")}${failures.length > 3 ? "; ..." : ""}`,
  );
}

export interface ReadinessResult {
  ok: boolean;
  checks: Record<string, string>;
  failed: string[];
  /** How long each check took (ms), for the log: a slow answer explains a late "ready". */
  ms: Record<string, number>;
}

export type Readiness = () => Promise<ReadinessResult>;

/**
 * `/ready`: Postgres answers `select 1` and NATS is connected with what the app needs in
 * JetStream. One check runs at a time and its answer is reused for a second, so a flood of
 * /ready requests on a public port costs at most one query a second. `onChange` hears a result
 * whose failing checks differ from the last one's, and a failing one again every `repeatMs`.
 */
export function createReadiness(
  checks: Record<string, () => Promise<unknown>>,
  opts: {
    timeoutMs?: number;
    reuseMs?: number;
    repeatMs?: number;
    onChange?: (result: ReadinessResult) => void;
  } = {},
): Readiness {
  const timeoutMs = opts.timeoutMs ?? 2_000;
  let last: { at: number; result: ReadinessResult } | undefined;
  let told = { at: 0, failing: "" };
  let running: Promise<ReadinessResult> | undefined;
  const run = async (): Promise<ReadinessResult> => {
    const out: Record<string, string> = {};
    const ms: Record<string, number> = {};
    const failed: string[] = [];
    await Promise.all(
      Object.entries(checks).map(async ([name, check]) => {
        const started = performance.now();
        try {
          await withTimeout(check(), timeoutMs);
          out[name] = "ok";
        } catch (err) {
          out[name] = String((err as Error)?.message ?? err);
          failed.push(`${name}: ${out[name]}`);
        }
        ms[name] = Math.round(performance.now() - started);
      }),
    );
    return { ok: failed.length === 0, checks: out, failed, ms };
  };
  return async () => {
    if (last && performance.now() - last.at < (opts.reuseMs ?? 1_000)) return last.result;
    running ??= run()
      .then((result) => {
        const failing = Object.keys(result.checks)
          .filter((name) => result.checks[name] !== "ok")
          .join();
        const now = performance.now();
        if (failing !== told.failing || (failing && now - told.at >= (opts.repeatMs ?? 5_000))) {
          told = { at: now, failing };
          opts.onChange?.(result);
        }
        last = { at: now, result };
        return result;
      })
      .finally(() => (running = undefined));
    return running;
  };
}

export const postgresCheck = (sql: postgres.Sql) => async () => {
  await sql`select 1`;
};

/**
 * The NATS check: the connection is up (`connected()` says, from the client's status events)
 * and the app's streams and consumers answer. Its own bound is under the readiness bound, so a
 * slow answer is reported with the reads that did not come back rather than a bare timeout.
 */
export const natsCheck =
  (
    app: AppName,
    nc: NatsConnection,
    jsm: JetStreamManager,
    t: Topology,
    user: string,
    connected: () => string | undefined = () => undefined,
    timeoutMs = 1_800,
  ) =>
  async () => {
    if (nc.isClosed()) throw new Error("connection closed");
    const down = connected();
    if (down) throw new Error(down);
    await checkNatsNeeds(app, jsm, t, user, timeoutMs);
  };

/**
 * Follows a connection's status events: logs disconnects and reconnects (with the server) and
 * answers why the connection is not usable now, or undefined while it is.
 */
export function watchNatsStatus(
  nc: NatsConnection,
  log: { warn: (msg: string, fields?: Record<string, unknown>) => void },
): () => string | undefined {
  let down: { since: number; server?: string } | undefined;
  void (async () => {
    for await (const s of nc.status()) {
      if (s.type === "disconnect") {
        down = { since: Date.now(), server: s.server };
        log.warn("NATS disconnected", { server: down.server });
      } else if (s.type === "reconnect") {
        // At warn beside the disconnect: how long an app was cut off is what an outage review asks.
        log.warn("NATS reconnected", {
          server: s.server,
          afterMs: down ? Date.now() - down.since : undefined,
        });
        down = undefined;
      }
    }
  })().catch(() => {});
  return () => (down ? `NATS disconnected ${Date.now() - down.since} ms ago (from ${down.server ?? "?"})` : undefined);
}
