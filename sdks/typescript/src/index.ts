/**
 * cellar-sdk: traces and events to a Cellar ingest host, configured by a DSN alone
 * (docs/sdks.md). Zero runtime dependencies: fetch, and CompressionStream where it exists.
 */

import { DsnError, parseDsn } from "./dsn.ts";
import { fitToLimit, mapStrings, type RedactorName, stringRedactor } from "./redact.ts";
import { isBrowser, installExitHooks } from "./runtime.ts";
import { sessionSampled } from "./sampling.ts";
import { CellarError, type Counts, type FlushResult, type LedgerCounts, Transport } from "./transport.ts";
import type { EventInput, EventPayload, ItemType, TraceInput, TracePayload } from "./types.ts";

export { DsnError, parseDsn, type ParsedDsn } from "./dsn.ts";
export { fmix32, fnv1a32, sampleHash, sessionSampled } from "./sampling.ts";
export {
  CellarError,
  type CellarErrorKind,
  type Counts,
  type FlushResult,
  type LedgerCounts,
} from "./transport.ts";
export { TRUNCATION_MARKER, type RedactorName } from "./redact.ts";
export type * from "./types.ts";

export const SDK_VERSION = "0.1.0";

export interface CellarOptions {
  /** A server DSN (`svc-ing-s-`, servers only) or a client DSN (`svc-ing-c-`, browsers). */
  dsn: string;
  /** The ingest base URL; needed only for a legacy DSN (one that does not carry it). */
  endpoint?: string;
  /** Sent as `environment` when a payload has none. */
  environment?: string;
  /** Share of sessions kept, 0..1 (default 1): decided on the session id, the same in every SDK. */
  sampleRate?: number;
  /** Runs on every payload before anything is queued: return the payload to send (changed or not), or null to drop it. */
  mask?: (payload: TracePayload | EventPayload, type: ItemType) => TracePayload | EventPayload | null;
  /** Opt-in redactors applied to every string after `mask`: "emails", "cardNumbers", "secrets". */
  redact?: RedactorName[];
  /** Largest payload (UTF-8 bytes of its JSON) sent as is; longer strings are cut with a marker to fit (default 1,000,000). */
  maxPayloadBytes?: number;
  /** Queue bounds (default 10,000 items, 32 MiB): past them the newest item is dropped and counted. */
  maxQueueItems?: number;
  maxQueueBytes?: number;
  /** Batch bounds (default 100 items, 512 KiB; the ingest host takes at most 1,000 items). */
  maxBatchItems?: number;
  maxBatchBytes?: number;
  /** How often queued items are sent (default 1000 ms). */
  flushIntervalMs?: number;
  /** Retries of a batch on network errors, 5xx, 408, 429 (default 8), backoff 500 ms doubling to 30 s, full jitter. */
  maxRetries?: number;
  retryBaseMs?: number;
  retryMaxMs?: number;
  requestTimeoutMs?: number;
  /** No background timer and no exit hooks: send with `flush()` (or `wrapHandler`) before the handler returns. */
  serverless?: boolean;
  /** Errors of the SDK's own (refusals, drops, bad settings): never thrown at the caller. */
  onError?: (error: CellarError) => void;
  /** true: log to console.debug; or a function of its own. */
  debug?: boolean | ((message: string) => void);
  /** The fetch to use (default globalThis.fetch). */
  fetch?: typeof fetch;
}

export interface Session {
  readonly id: string;
  trace(input: Omit<TraceInput, "session_id">): void;
  event(name: string, fields?: Partial<EventInput>): void;
}

const toIso = (t: string | Date | undefined): string =>
  t === undefined ? new Date().toISOString() : typeof t === "string" ? t : t.toISOString();

export class Cellar {
  readonly endpoint: string;
  readonly serviceName: string | undefined;
  private transport: Transport;
  private removeHooks: () => void;
  private redactString: ((text: string) => string) | null;
  private readonly sampleRate: number;
  private readonly maxPayloadBytes: number;

  constructor(private options: CellarOptions) {
    const dsn = parseDsn(options.dsn);
    if (dsn.kind === "server" && isBrowser())
      throw new DsnError(
        "a server DSN (svc-ing-s-) is a secret and must not run in a browser: use a client DSN (svc-ing-c-)",
      );
    const endpoint = options.endpoint ?? dsn.endpoint;
    if (!endpoint)
      throw new DsnError("this DSN is a legacy DSN that does not carry its endpoint: set the `endpoint` option");
    this.endpoint = endpoint.replace(/\/+$/, "");
    this.serviceName = dsn.serviceName;
    this.sampleRate = options.sampleRate ?? 1;
    if (!(this.sampleRate >= 0 && this.sampleRate <= 1)) throw new RangeError("sampleRate must be between 0 and 1");
    this.maxPayloadBytes = options.maxPayloadBytes ?? 1_000_000;
    this.redactString = stringRedactor(options.redact ?? []);
    const debug =
      typeof options.debug === "function"
        ? options.debug
        : options.debug
          ? (m: string) => console.debug(`[cellar] ${m}`)
          : () => {};
    this.transport = new Transport({
      endpoint: this.endpoint,
      token: options.dsn,
      maxQueueItems: options.maxQueueItems ?? 10_000,
      maxQueueBytes: options.maxQueueBytes ?? 32 * 1024 * 1024,
      maxBatchItems: Math.min(options.maxBatchItems ?? 100, 1000),
      maxBatchBytes: options.maxBatchBytes ?? 512 * 1024,
      flushIntervalMs: options.serverless ? 0 : (options.flushIntervalMs ?? 1000),
      maxRetries: options.maxRetries ?? 8,
      retryBaseMs: options.retryBaseMs ?? 500,
      retryMaxMs: options.retryMaxMs ?? 30_000,
      requestTimeoutMs: options.requestTimeoutMs ?? 10_000,
      gzipMinBytes: 2048,
      fetch: options.fetch ?? (((...a: Parameters<typeof fetch>) => globalThis.fetch(...a)) as typeof fetch),
      serviceName: dsn.serviceName,
      report: (e) => this.report(e),
      debug,
    });
    this.removeHooks = options.serverless
      ? () => {}
      : installExitHooks(
          (keepalive) => void this.transport.flush(10_000, keepalive),
          () => this.transport.pending,
        );
  }

  /** Queues one model call (the contract's trace payload). Never throws. */
  trace(input: TraceInput): void {
    try {
      if (!this.sampled(input.session_id)) return;
      const payload: TracePayload = {
        ...input,
        provider: input.provider ?? "openai",
        start_time: toIso(input.start_time),
        end_time: toIso(input.end_time),
      };
      if (payload.environment === undefined && this.options.environment) payload.environment = this.options.environment;
      this.capture("trace", payload);
    } catch (err) {
      this.report(new CellarError("dropped", `trace not captured: ${(err as Error)?.message ?? err}`));
    }
  }

  /** Queues one application event; `timestamp` defaults to now. Never throws. */
  event(input: EventInput): void {
    try {
      if (!this.sampled(input.session_id)) return;
      const payload: EventPayload = { ...input, timestamp: toIso(input.timestamp) };
      if (payload.environment === undefined && this.options.environment) payload.environment = this.options.environment;
      this.capture("event", payload);
    } catch (err) {
      this.report(new CellarError("dropped", `event not captured: ${(err as Error)?.message ?? err}`));
    }
  }

  /** A session: its traces and events carry its id. */
  session(id: string): Session {
    return {
      id,
      trace: (input) => this.trace({ ...input, session_id: id } as unknown as TraceInput),
      event: (name, fields = {}) => this.event({ ...fields, name, session_id: id }),
    };
  }

  /**
   * True when this session's telemetry is kept (sampleRate). Wrappers skip all work otherwise: a
   * false is one item sampled out, counted in the ledger (docs/sdks.md "The ledger").
   */
  sampled(sessionId: string): boolean {
    if (sessionSampled(sessionId, this.sampleRate)) return true;
    this.transport.notQueued(1, "sampled_out");
    return false;
  }

  /** mask, redact, serialise, fit to the size limit, queue. */
  private capture(type: ItemType, payload: TracePayload | EventPayload): void {
    let body: unknown = payload;
    if (this.options.mask) {
      body = this.options.mask(payload, type);
      if (body === null || body === undefined) return;
    }
    if (this.redactString) body = mapStrings(body, this.redactString);
    const json = fitToLimit(body, JSON.stringify(body), this.maxPayloadBytes);
    if (json === null) {
      this.transport.requested();
      this.transport.drop(
        1,
        `${type} too large to send even with its strings cut (${this.maxPayloadBytes} bytes)`,
        "refused",
      );
      return;
    }
    this.transport.enqueue(type, json, json.length);
  }

  /** Sends what is queued; resolves (never rejects) with the counts since the previous flush. */
  flush(options: { timeoutMs?: number } = {}): Promise<FlushResult> {
    return this.transport.flush(options.timeoutMs ?? 30_000).catch(() => ({ ...this.transport.counts, pending: -1 }));
  }

  /** Flushes, stops the timer and the exit hooks; later calls are dropped (counted). */
  async shutdown(options: { timeoutMs?: number } = {}): Promise<FlushResult> {
    const result = await this.flush(options);
    this.transport.closed = true;
    this.transport.stopTimer();
    this.removeHooks();
    return result;
  }

  /** Totals since this client was made. */
  get stats(): Counts {
    return this.transport.counts;
  }

  /** The ledger's counters this client reports inside its batches (docs/sdks.md "The ledger"). */
  get ledger(): LedgerCounts {
    return this.transport.ledgerCounts;
  }

  /** Wraps a serverless handler: its telemetry is sent before it returns (or throws). */
  wrapHandler<A extends unknown[], R>(handler: (...args: A) => R | Promise<R>): (...args: A) => Promise<R> {
    return async (...args: A) => {
      try {
        return await handler(...args);
      } finally {
        await this.flush();
      }
    };
  }

  /** @internal Reports through onError (a throwing hook is ignored). */
  report(error: CellarError): void {
    try {
      this.options.onError?.(error);
    } catch {}
  }
}

/** Shorthand for `new Cellar(options)`. */
export function createCellar(options: CellarOptions): Cellar {
  return new Cellar(options);
}
