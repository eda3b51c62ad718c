/**
 * The background queue (docs/sdks.md "Guarantees"): items are queued as JSON text, bounded by
 * count and bytes (when full the newest item is dropped and counted), sent in batches through
 * POST /raw/batch, one request at a time, gzip when it pays. Network errors, 5xx, 408 and 429 are
 * retried with exponential backoff and full jitter (Retry-After honoured); other 4xx never are;
 * per-item refusals are reported and counted, not retried. Nothing here ever rejects to the caller.
 */

import type { ItemType } from "./types.ts";

export interface TransportOptions {
  endpoint: string;
  token: string;
  maxQueueItems: number;
  maxQueueBytes: number;
  maxBatchItems: number;
  maxBatchBytes: number;
  /** Background send interval; 0: only when a batch is full or on flush() (serverless). */
  flushIntervalMs: number;
  maxRetries: number;
  retryBaseMs: number;
  retryMaxMs: number;
  requestTimeoutMs: number;
  /** Bodies at least this large are gzipped (when CompressionStream exists). */
  gzipMinBytes: number;
  fetch: typeof fetch;
  /** The DSN's service, named in the ledger report (the host checks it against the DSN). */
  serviceName?: string;
  report: (error: CellarError) => void;
  debug: (message: string) => void;
}

/**
 * refused: the ingest host refused items (per item, or a whole batch with a 4xx other than 408/429);
 * dropped: the SDK dropped items (queue full, retries exhausted, after shutdown, a payload too
 * large to truncate); config: a setting is wrong; network: an unexpected failure inside the SDK.
 */
export type CellarErrorKind = "refused" | "dropped" | "network" | "config";

/** What the onError hook receives: never thrown at the caller. */
export class CellarError extends Error {
  override name = "CellarError";
  constructor(
    readonly kind: CellarErrorKind,
    message: string,
    readonly status?: number,
    readonly count = 1,
  ) {
    super(message);
  }
}

export interface Counts {
  /** Items the ingest host accepted (stored). */
  sent: number;
  /** Items refused by the ingest host (per item, or whole batches answered with a 4xx): not retried. */
  refused: number;
  /** Items dropped by this SDK: queue full, sampled out never counts, retries exhausted, after shutdown. */
  dropped: number;
  /** Batch retries done. */
  retried: number;
}

/**
 * The ledger's counters (docs/sdks.md "The ledger"): cumulative since this client was made, sent
 * inside every batch with a growing `seq`, so the ingest host counts a retried batch's once.
 */
export interface LedgerCounts {
  /** Items the application asked to send (captured, sampled out or not). */
  requested: number;
  /** Not queued: the queue was full, or the client was shut down. */
  queue_full: number;
  retries_exhausted: number;
  /** Refused by the ingest host (per item, a whole batch, a DSN refused lately), or too large to send. */
  refused: number;
  /** Not kept: its session is sampled out (sampleRate). */
  sampled_out: number;
}
export type DropReason = Exclude<keyof LedgerCounts, "requested">;

export interface FlushResult extends Counts {
  /** Items still queued or in flight (flush timed out). */
  pending: number;
}

interface Item {
  type: ItemType;
  json: string;
  bytes: number;
}

const RETRYABLE = (status: number) => status >= 500 || status === 408 || status === 429;
/** keepalive requests are limited to 64 KiB of body in flight by browsers. */
const KEEPALIVE_MAX_BYTES = 60 * 1024;

export class Transport {
  private queue: Item[] = [];
  private queuedBytes = 0;
  private inFlight = 0;
  private sending: Promise<void> | null = null;
  private timer: ReturnType<typeof setInterval> | null = null;
  private totals: Counts = { sent: 0, refused: 0, dropped: 0, retried: 0 };
  private lastFlush: Counts = { sent: 0, refused: 0, dropped: 0, retried: 0 };
  private ledger: LedgerCounts = { requested: 0, queue_full: 0, retries_exhausted: 0, refused: 0, sampled_out: 0 };
  private ledgerSeq = 0;
  /** This client's id in the ledger: its reports replace each other, never add up. */
  private readonly instance = instanceId();
  private blockedUntil = 0;
  /** Items per batch now: halved by a 413, doubled back by each accepted batch. */
  private batchCap: number;
  private lastDropReport = 0;
  /** An in-progress backoff wait, cut short by flush(). */
  private wake: (() => void) | null = null;
  closed = false;

  constructor(private o: TransportOptions) {
    this.batchCap = o.maxBatchItems;
    if (o.flushIntervalMs > 0) {
      this.timer = setInterval(() => this.kick(), o.flushIntervalMs);
      // Never keep a process alive for telemetry (Node, Bun, Deno).
      (this.timer as { unref?: () => void }).unref?.();
    }
  }

  get counts(): Counts {
    return { ...this.totals };
  }

  get pending(): number {
    return this.queue.length + this.inFlight;
  }

  /** Counts items the application asked to send that never reach the queue (ledger only). */
  notQueued(count: number, reason: "sampled_out"): void {
    this.ledger.requested += count;
    this.ledger[reason] += count;
  }

  /** Counts one item the application asked to send (enqueue does; a too-large item here). */
  requested(): void {
    this.ledger.requested++;
  }

  /** Queues one item's JSON; false when it was dropped (queue full, or closed). */
  enqueue(type: ItemType, json: string, bytes: number): boolean {
    this.ledger.requested++;
    if (this.closed) return this.drop(1, "the SDK was shut down");
    if (this.queue.length >= this.o.maxQueueItems || this.queuedBytes + bytes > this.o.maxQueueBytes)
      return this.drop(1, `queue full (${this.o.maxQueueItems} items / ${this.o.maxQueueBytes} bytes): newest dropped`);
    this.queue.push({ type, json, bytes });
    this.queuedBytes += bytes;
    if (this.queue.length >= this.o.maxBatchItems || this.queuedBytes >= this.o.maxBatchBytes) this.kick();
    return true;
  }

  /** Counts `count` items as dropped and reports it (at most once a second). */
  drop(count: number, why: string, reason: DropReason = "queue_full"): false {
    this.totals.dropped += count;
    this.ledger[reason] += count;
    // One report per second at most: a full queue under load must not flood the hook.
    const now = Date.now();
    if (now - this.lastDropReport >= 1000) {
      this.lastDropReport = now;
      this.o.report(new CellarError("dropped", why, undefined, count));
    }
    return false;
  }

  /** Starts the send loop unless it runs. */
  kick(keepalive = false): Promise<void> {
    if (!this.sending) {
      this.sending = this.loop(keepalive).finally(() => {
        this.sending = null;
      });
    }
    return this.sending;
  }

  private async loop(keepalive: boolean): Promise<void> {
    while (this.queue.length > 0) {
      if (Date.now() < this.blockedUntil) {
        const n = this.queue.length;
        this.queue = [];
        this.queuedBytes = 0;
        this.drop(n, "the ingest host refused this DSN lately (401/403): items dropped", "refused");
        return;
      }
      const batch = this.take();
      this.inFlight += batch.length;
      try {
        await this.sendWithRetries(batch, keepalive);
      } catch (err) {
        // Not expected (every path is handled): never let it escape as an unhandled rejection.
        this.o.report(new CellarError("network", `unexpected send failure: ${(err as Error)?.message ?? err}`));
      } finally {
        this.inFlight -= batch.length;
      }
    }
  }

  /** The oldest items, up to the batch limits (always at least one). */
  private take(): Item[] {
    let bytes = 0;
    let n = 0;
    while (n < this.queue.length && n < this.batchCap) {
      if (n > 0 && bytes + this.queue[n].bytes > this.o.maxBatchBytes) break;
      bytes += this.queue[n].bytes;
      n++;
    }
    const batch = this.queue.splice(0, n);
    this.queuedBytes -= bytes;
    return batch;
  }

  private async sendWithRetries(batch: Item[], keepalive: boolean): Promise<void> {
    // Built once: a retry sends the same body, its ledger report too (the host counts it once).
    const items = batch.map((i) => `{"type":"${i.type}","body":${i.json}}`).join(",");
    const text = `{"items":[${items}],"ledger":${this.ledgerReport()}}`;
    for (let attempt = 0; ; attempt++) {
      const outcome = await this.post(batch, text, keepalive);
      if (outcome.kind === "done") {
        this.batchCap = Math.min(this.o.maxBatchItems, this.batchCap * 2);
        return;
      }
      if (outcome.kind === "split") {
        this.batchCap = Math.max(1, Math.ceil(batch.length / 2));
        // 413: halves go back to the front of the queue, oldest first.
        const half = Math.ceil(batch.length / 2);
        this.requeueFront(batch.slice(half));
        this.requeueFront(batch.slice(0, half));
        return;
      }
      if (attempt >= this.o.maxRetries || this.closed) {
        this.drop(batch.length, `gave up after ${attempt + 1} attempts: ${outcome.why}`, "retries_exhausted");
        return;
      }
      const backoff = Math.min(this.o.retryMaxMs, this.o.retryBaseMs * 2 ** attempt) * Math.random();
      const wait = outcome.retryAfterMs !== undefined ? Math.min(outcome.retryAfterMs, this.o.retryMaxMs) : backoff;
      this.totals.retried++;
      this.o.debug(`retrying ${batch.length} items in ${Math.round(wait)} ms: ${outcome.why}`);
      await new Promise<void>((resolve) => {
        const t = setTimeout(resolve, wait);
        // A backoff never keeps a process alive on its own: at exit the hook's flush cuts it short.
        (t as { unref?: () => void }).unref?.();
        // flush() may cut a backoff short, never a wait the server asked for (Retry-After).
        if (outcome.retryAfterMs === undefined)
          this.wake = () => {
            clearTimeout(t);
            resolve();
          };
      });
      this.wake = null;
    }
  }

  private requeueFront(items: Item[]) {
    this.queue.unshift(...items);
    for (const i of items) this.queuedBytes += i.bytes;
  }

  private async post(
    batch: Item[],
    text: string,
    keepalive: boolean,
  ): Promise<
    { kind: "done" } | { kind: "split" } | { kind: "retry"; why: string; status?: number; retryAfterMs?: number }
  > {
    const headers: Record<string, string> = {
      authorization: `Bearer ${this.o.token}`,
      "content-type": "application/json",
    };
    let body: BodyInit = text;
    if (text.length >= this.o.gzipMinBytes && typeof CompressionStream === "function") {
      body = (await gzip(text)) as unknown as BodyInit;
      headers["content-encoding"] = "gzip";
    }
    const size = typeof body === "string" ? text.length : (body as unknown as Uint8Array).byteLength;
    const controller = new AbortController();
    const timer = setTimeout(() => controller.abort(), this.o.requestTimeoutMs);
    let res: Response;
    try {
      res = await this.o.fetch(`${this.o.endpoint}/raw/batch`, {
        method: "POST",
        headers,
        body,
        keepalive: keepalive && size <= KEEPALIVE_MAX_BYTES,
        signal: controller.signal,
      });
    } catch (err) {
      clearTimeout(timer);
      return { kind: "retry", why: `network error: ${(err as Error)?.message ?? err}` };
    }
    let answer: { error?: string; items?: Array<{ status: string; error?: string }> } | null = null;
    try {
      answer = await res.json();
    } catch {}
    clearTimeout(timer);
    if (res.status === 200 && answer?.items?.length === batch.length) {
      answer.items.forEach((a, i) => {
        if (a.status === "accepted") this.totals.sent++;
        else {
          this.totals.refused++;
          this.ledger.refused++;
          this.o.report(new CellarError("refused", `${batch[i].type} refused: ${a.error}`, 200));
        }
      });
      this.o.debug(`sent ${batch.length} items`);
      return { kind: "done" };
    }
    const why = `HTTP ${res.status}${answer?.error ? `: ${answer.error}` : ""}`;
    if (RETRYABLE(res.status) || res.status === 200)
      return { kind: "retry", why, status: res.status, retryAfterMs: retryAfterMs(res.headers.get("retry-after")) };
    if (res.status === 413 && batch.length > 1) return { kind: "split" };
    if (res.status === 401 || res.status === 403) this.blockedUntil = Date.now() + 60_000;
    this.totals.refused += batch.length;
    this.ledger.refused += batch.length;
    this.o.report(new CellarError("refused", `${batch.length} items refused: ${why}`, res.status, batch.length));
    return { kind: "done" };
  }

  /**
   * Sends everything queued (cutting short a backoff wait) and resolves with the counts since the
   * previous flush, within `timeoutMs`; `pending` says what was still unsent then.
   */
  async flush(timeoutMs = 30_000, keepalive = false): Promise<FlushResult> {
    const deadline = Date.now() + timeoutMs;
    while (this.pending > 0 && Date.now() < deadline) {
      this.wake?.();
      const run = this.kick(keepalive);
      let t: ReturnType<typeof setTimeout> | undefined;
      await Promise.race([run, new Promise<void>((r) => (t = setTimeout(r, Math.max(0, deadline - Date.now()))))]);
      clearTimeout(t);
    }
    const now = this.totals;
    const since: FlushResult = {
      sent: now.sent - this.lastFlush.sent,
      refused: now.refused - this.lastFlush.refused,
      dropped: now.dropped - this.lastFlush.dropped,
      retried: now.retried - this.lastFlush.retried,
      pending: this.pending,
    };
    this.lastFlush = { ...now };
    return since;
  }

  /** The ledger's counters so far (what the next batch reports). */
  get ledgerCounts(): LedgerCounts {
    return { ...this.ledger };
  }

  /** The batch envelope's `ledger`: counts only, about 200 bytes, a new seq per batch. */
  private ledgerReport(): string {
    return JSON.stringify({
      instance: this.instance,
      seq: ++this.ledgerSeq,
      ...(this.o.serviceName ? { service_name: this.o.serviceName } : {}),
      counts: this.ledger,
    });
  }

  stopTimer(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }
}

/** A random id for this client's ledger reports (crypto.randomUUID where there is one). */
function instanceId(): string {
  const c = (globalThis as { crypto?: { randomUUID?: () => string } }).crypto;
  if (c?.randomUUID) return c.randomUUID();
  return Array.from({ length: 4 }, () =>
    Math.floor(Math.random() * 2 ** 32)
      .toString(16)
      .padStart(8, "0"),
  ).join("");
}

/** Seconds or an HTTP date, in ms; undefined when absent or unreadable. */
export function retryAfterMs(header: string | null): number | undefined {
  if (!header) return undefined;
  const seconds = Number(header);
  if (Number.isFinite(seconds) && seconds >= 0) return seconds * 1000;
  const at = Date.parse(header);
  return Number.isFinite(at) ? Math.max(0, at - Date.now()) : undefined;
}

async function gzip(text: string): Promise<Uint8Array> {
  const stream = new Blob([text]).stream().pipeThrough(new CompressionStream("gzip"));
  return new Uint8Array(await new Response(stream).arrayBuffer());
}
