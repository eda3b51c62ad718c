import type { NatsConnection } from "@nats-io/transport-node";
import type { JetStreamManager } from "@nats-io/jetstream";
import type postgres from "postgres";
import type { Topology } from "../nats/topology.ts";
import {
  activityStream,
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
        consumers: [...consumerOf(ingestStream), ...consumerOf(activityStream)],
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
  await Promise.all([
    ...[...needs.streams, ...(needs.deadLetters.length ? [t.deadLetterStream] : [])].map((stream) =>
      withTimeout(jsm.streams.info(stream), timeoutMs).catch((err) => {
        throw explain(`stream ${stream}`, err);
      }),
    ),
    ...needs.consumers.map((c) =>
      withTimeout(jsm.consumers.info(c.stream, c.name), timeoutMs).catch((err) => {
        throw explain(`consumer ${c.name} of stream ${c.stream}`, err);
      }),
    ),
  ]);
}

export type Readiness = () => Promise<{ ok: boolean; checks: Record<string, string>; failed: string[] }>;

/**
 * `/ready`: Postgres answers `select 1` and NATS is connected with what the app needs in
 * JetStream. One check runs at a time and its answer is reused for a second, so a flood of
 * /ready requests on a public port costs at most one query a second.
 */
export function createReadiness(
  checks: Record<string, () => Promise<unknown>>,
  opts: { timeoutMs?: number; reuseMs?: number; onChange?: (result: Awaited<ReturnType<Readiness>>) => void } = {},
): Readiness {
  const timeoutMs = opts.timeoutMs ?? 2_000;
  let last: { at: number; result: Awaited<ReturnType<Readiness>> } | undefined;
  let running: Promise<Awaited<ReturnType<Readiness>>> | undefined;
  const run = async () => {
    const out: Record<string, string> = {};
    const failed: string[] = [];
    await Promise.all(
      Object.entries(checks).map(async ([name, check]) => {
        try {
          await withTimeout(check(), timeoutMs);
          out[name] = "ok";
        } catch (err) {
          out[name] = String((err as Error)?.message ?? err);
          failed.push(`${name}: ${out[name]}`);
        }
      }),
    );
    return { ok: failed.length === 0, checks: out, failed };
  };
  return async () => {
    if (last && performance.now() - last.at < (opts.reuseMs ?? 1_000)) return last.result;
    running ??= run()
      .then((result) => {
        if (last?.result.failed.join() !== result.failed.join()) opts.onChange?.(result);
        last = { at: performance.now(), result };
        return result;
      })
      .finally(() => (running = undefined));
    return running;
  };
}

export const postgresCheck = (sql: postgres.Sql) => async () => {
  await sql`select 1`;
};

export const natsCheck =
  (app: AppName, nc: NatsConnection, jsm: JetStreamManager, t: Topology, user: string) => async () => {
    if (nc.isClosed()) throw new Error("connection closed");
    await checkNatsNeeds(app, jsm, t, user);
  };
