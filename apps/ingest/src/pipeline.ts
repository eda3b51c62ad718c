import type { JetStreamClient } from "@nats-io/jetstream";
import type { KeyResolver, ResolvedKey } from "@cellar/shared/auth/keys";
import { badRequest, forbidden, HttpError } from "@cellar/shared/errors";
import { jsonResponse } from "@cellar/shared/http";
import type { Logger } from "@cellar/shared/logger";
import type { Topology } from "@cellar/shared/nats/topology";
import type { LedgerCounter } from "@cellar/shared/ledger/counter";
import { createFairTurns } from "@cellar/shared/fair-turns";
import { createRateLimiter, type RateReservation } from "@cellar/shared/rate-limit";
import { type Authenticated, createAuthenticator } from "./credentials.ts";
import type { RefusalPacing } from "./pacing.ts";
import {
  type BuiltMessage,
  type BulkLaneRoute,
  createPublishing,
  type StoreInput,
  type StoredBatch,
  type StoredBuilt,
} from "./publish.ts";

export interface IngestDeps {
  js: JetStreamClient;
  topology: Topology;
  keys: KeyResolver;
  logger: Logger;
  maxBodyBytes: number;
  /** How long to wait for JetStream's PubAck before answering 503 (default 5 s). */
  publishTimeoutMs?: number;
  /** Per-credential token bucket; omitted or perSecond 0 = no limit. */
  rateLimit?: { perSecond: number; burst: number };
  /** From watchConnection(nc): lets the app answer 503 at once while NATS is down. */
  connected?: () => boolean;
  /** Publishes awaiting a PubAck beyond this get 503 (default 10,000). */
  maxInFlightPublishes?: number;
  now?: () => Date;
  /** The ledger's counts (docs/ledger.md): accepted per door, refused per reason, SDK reports. */
  ledger?: LedgerCounter;
  /** 429s paced for clients that ignore Retry-After (pacing.ts); absent: every 429 at once. */
  pacing?: RefusalPacing;
  /** Large INGEST messages on a NATS connection of their own (bulk-lane.ts); absent: all on `js`. */
  bulk?: BulkLaneRoute;
  /** Threads for large admitted requests (offload/pool.ts); absent: every request is worked on the event loop. */
  offload?: OffloadRunner;
}

/** What the pipeline needs of the offload pool (offload/pool.ts `Offload`): its threshold, and a job run in a tenant's turn. */
export interface OffloadRunner {
  readonly minBytes: number;
  run(tenantId: string, name: "otlp" | "batch", data: never): Promise<unknown>;
}

/**
 * What every ingestion door shares: one authenticator (and its last-known-keys memory), one rate
 * limiter, one publisher. The route handlers (raw.ts, batch.ts, otlp/routes.ts) take it as their
 * first argument, so each can be driven on its own with a pipeline of fakes.
 */
export interface IngestPipeline {
  authenticate(request: Request, client?: string): Promise<Authenticated>;
  /** Takes `count` tokens of the credential's bucket: RateLimit headers, or throws 429. */
  takeRateTokens(keyId: string, count?: number): Record<string, string>;
  /**
   * Before a many-item request's body is read (/raw/batch, OTLP): reserves the credential's
   * estimate for `door`, or throws 429 at once; `settle` with the real count once it is known
   * (shared/rate-limit.ts, docs/ingestion.md "Rate limits").
   */
  reserveRateTokens(keyId: string, door: string): RateReservation;
  /** Publishes to INGEST; resolves after JetStream's PubAck, throws 503 (or 413) otherwise. */
  store(input: StoreInput): Promise<{ messageId: string; duplicate: boolean }>;
  /** A request's items in one INGEST message (split only past the maximum payload); after every PubAck. */
  storeAll(inputs: StoreInput[]): Promise<StoredBatch[]>;
  /** Messages an offload thread built (offload/tasks.ts), published as storeAll publishes; after every PubAck. */
  storeBuilt(messages: BuiltMessage[], door?: string): Promise<StoredBuilt[]>;
  /**
   * A request's work (`task` of offload/tasks.ts: "otlp", "batch") on an offload thread, in its
   * tenant's turn for one, when it is `size` bytes or more (INGEST_OFFLOAD_MIN_BYTES): the task's
   * result, for the door to answer from. Undefined when the door is to do the work itself (smaller,
   * no offload, or the pool could not take it). The job gets the messages' receivedAt and the
   * largest message the publisher takes. Absent without an offload.
   */
  offloaded?<Job extends object>(tenantId: string, task: "otlp" | "batch", size: number, job: Job): Promise<unknown>;
  /**
   * Resolves when it is `tenantId`'s turn on the event loop (shared/fair-turns.ts): a door takes
   * one once its request is admitted and read, and a many-item request one between its slices,
   * so each tenant's work waits behind at most one slice of each other tenant's (issue 41).
   */
  turn(tenantId: string): Promise<void>;
  maxBodyBytes: number;
  logger: Logger;
  /** The ledger's counts; a door's request gets a counting view of the pipeline (ledger.ts). */
  ledger?: LedgerCounter;
  now?: () => Date;
  /** Counts `n` items of the request refused one by one (a batch's or an OTLP request's). */
  refuseItems?(n: number, serviceName?: string): void;
  /** A batch envelope's `ledger` report, counted for the request's credential. */
  sdkReport?(given: unknown): void;
}

export function createIngestPipeline(deps: IngestDeps): IngestPipeline {
  const now = deps.now ?? (() => new Date());
  const limiter = createRateLimiter({
    perSecond: deps.rateLimit?.perSecond ?? 0,
    burst: deps.rateLimit?.burst ?? 1,
    now: () => now().getTime(),
  });
  const offload = deps.offload;
  // One rotation for every door of this host (HTTP and gRPC share this pipeline: main.ts).
  const turns = createFairTurns();
  const { store, storeAll, storeBuilt, maxMessageBytes } = createPublishing({
    js: deps.js,
    topology: deps.topology,
    logger: deps.logger,
    now,
    maxBodyBytes: deps.maxBodyBytes,
    publishTimeoutMs: deps.publishTimeoutMs ?? 5_000,
    connected: deps.connected,
    maxInFlight: deps.maxInFlightPublishes ?? 10_000,
    bulk: deps.bulk,
    turn: turns.take,
  });
  return {
    authenticate: createAuthenticator(deps.keys, deps.logger),
    takeRateTokens: (id, count) => limiter.take(id, count),
    reserveRateTokens: (id, door) => limiter.reserve(id, door),
    store,
    storeAll,
    storeBuilt,
    offloaded: offload
      ? async (tenantId, task, size, job) =>
          size < offload.minBytes
            ? undefined
            : offload.run(tenantId, task, { ...job, receivedAt: now().toISOString(), maxMessageBytes } as never)
      : undefined,
    turn: turns.take,
    maxBodyBytes: deps.maxBodyBytes,
    logger: deps.logger,
    ledger: deps.ledger,
    now,
  };
}

/**
 * The service a payload is stored under: a DSN's own (403 when the payload names another), else
 * the payload's `service_name` (400 when a telemetry key sends none).
 */
export function serviceNameFor(key: ResolvedKey, given: string | undefined): string {
  if (key.kind === "dsn-server" || key.kind === "dsn-client") {
    if (given !== undefined && given !== key.serviceName) {
      throw forbidden(`invalid service_name: ${JSON.stringify(given)} does not match this DSN's service`);
    }
    return key.serviceName!;
  }
  if (given === undefined) throw badRequest("invalid service_name: required (only a DSN carries its own service)");
  return given;
}

/**
 * Runs a door with the response headers it gathers (request id, CORS, rate limit: `run` adds to
 * them); an HttpError becomes the contract's `{"error"}` answer with those headers kept.
 */
export async function answerErrors(
  requestId: string,
  run: (headers: Record<string, string>) => Promise<Response>,
): Promise<Response> {
  const headers: Record<string, string> = { "x-request-id": requestId };
  try {
    return await run(headers);
  } catch (err) {
    if (!(err instanceof HttpError)) throw err;
    return jsonResponse(err.status, { error: err.message }, { ...headers, ...err.headers });
  }
}

export { ITEMS_PER_TURN } from "./publish.ts";
