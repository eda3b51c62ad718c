/**
 * The chaos run's clients: steady trace and event load from several tenants (sessions that burst,
 * go idle past the maturation window and burst again), spread over every ingest instance with
 * client retries, and webhook receivers that verify every signature. Both write what they saw
 * into the ledger the checks run against.
 */
import { Webhook } from "standardwebhooks";
import { chatTrace } from "../../test/helpers/payloads";

export interface Tenant {
  index: number;
  tenantId: string;
  telemetryKey: string;
  platformKey: string;
  serviceName: string;
  serviceId: string;
}

/** One request as the client saw it; status 0 = no answer (refused, reset, timed out). */
export interface RequestRecord {
  at: number;
  ms: number;
  status: number;
}

export interface AckedItem {
  kind: "trace" | "event";
  id: string;
  tenant: number;
  sessionId: string;
  ackAt: number;
}

export interface SessionRecord {
  tenant: number;
  sessionId: string;
  bursts: number;
  lastAckAt: number;
}

export interface ReceivedWebhook {
  receiver: string;
  webhookId: string;
  type: string;
  data: {
    session_id?: string;
    trace_id?: string;
    maturation_count: number;
    occurred_at: string;
    trace_service_id: string;
  };
  valid: boolean;
  at: number;
}

export interface LoadOptions {
  ingestUrls: () => string[];
  tenants: Tenant[];
  /** Target traces per second over all tenants. */
  tracesPerSecond: number;
  windowSeconds: number;
  /** Traces per burst and the gap between them. */
  burst?: number;
  gapMs?: number;
  /** A request unanswered after this long counts as a failure (and is retried). */
  requestTimeoutMs?: number;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export class LoadGenerator {
  readonly requests: RequestRecord[] = [];
  readonly acked = new Map<string, AckedItem>();
  readonly sessions = new Map<string, SessionRecord>();
  /** Items that never got a 200 (client gave up): may or may not be stored, not counted. */
  unacked = 0;
  private running = false;
  private slots: Promise<void>[] = [];
  private rr = 0;
  private readonly burst: number;
  private readonly gapMs: number;

  constructor(private opts: LoadOptions) {
    this.burst = opts.burst ?? 6;
    this.gapMs = opts.gapMs ?? 300;
  }

  /** Sessions needed in parallel to offer `tracesPerSecond`. */
  get concurrency(): number {
    const idleMs = this.opts.windowSeconds * 2500;
    const perSession = (2 * this.burst) / ((2 * (this.burst * this.gapMs + idleMs)) / 1000);
    return Math.max(1, Math.ceil(this.opts.tracesPerSecond / perSession));
  }

  start(): void {
    this.running = true;
    const n = this.concurrency;
    for (let i = 0; i < n; i++) {
      // Staggered so bursts do not line up.
      this.slots.push(
        (async () => {
          await sleep(Math.random() * (this.burst * this.gapMs + this.opts.windowSeconds * 2500));
          while (this.running) await this.session(this.opts.tenants[i % this.opts.tenants.length]);
        })(),
      );
    }
  }

  /** Stops starting new work; sessions in flight finish their current request and end. */
  async stop(): Promise<void> {
    this.running = false;
    await Promise.all(this.slots);
  }

  private async session(t: Tenant): Promise<void> {
    const sessionId = `chaos-${crypto.randomUUID()}`;
    const key = `${t.index}/${sessionId}`;
    for (let b = 0; b < 2 && this.running; b++) {
      for (let i = 0; i < this.burst && this.running; i++) {
        const traceId = `ct-${crypto.randomUUID()}`;
        const body = chatTrace({
          sessionId,
          serviceName: t.serviceName,
          messages: [{ role: "user", content: `turn ${b}.${i}` }],
          reply: `answer ${b}.${i}`,
          extra: { trace_id: traceId },
        });
        if (await this.send("/raw/traces", body, t))
          this.ack({ kind: "trace", id: traceId, tenant: t.index, sessionId, ackAt: Date.now() }, key, b);
        await sleep(this.gapMs);
      }
      if (!this.running) return;
      const eventId = `ce-${crypto.randomUUID()}`;
      const event = {
        name: "chaos.step",
        service_name: t.serviceName,
        session_id: sessionId,
        timestamp: new Date().toISOString(),
        attributes: { ledger_id: eventId },
      };
      if (await this.send("/raw/events", event, t))
        this.ack({ kind: "event", id: eventId, tenant: t.index, sessionId, ackAt: Date.now() }, key, b);
      // Idle well past the window: this idle period must mature exactly once.
      await sleep(this.opts.windowSeconds * 2500);
    }
  }

  private ack(item: AckedItem, sessionKey: string, burst: number): void {
    this.acked.set(item.id, item);
    const s = this.sessions.get(sessionKey) ?? {
      tenant: item.tenant,
      sessionId: item.sessionId,
      bursts: 0,
      lastAckAt: 0,
    };
    s.bursts = Math.max(s.bursts, burst + 1);
    s.lastAckAt = item.ackAt;
    this.sessions.set(sessionKey, s);
  }

  /** POSTs until a 200 (true) or the client gives up (false); every try is recorded. */
  private async send(path: string, body: unknown, t: Tenant): Promise<boolean> {
    const text = JSON.stringify(body);
    const giveUpAt = Date.now() + 120_000;
    while (Date.now() < giveUpAt) {
      const urls = this.opts.ingestUrls();
      const url = urls[this.rr++ % urls.length];
      const at = Date.now();
      let status = 0;
      let retryAfterMs = 250;
      try {
        const res = await fetch(url + path, {
          method: "POST",
          headers: { authorization: `Bearer ${t.telemetryKey}`, "content-type": "application/json" },
          body: text,
          signal: AbortSignal.timeout(this.opts.requestTimeoutMs ?? 15_000),
        });
        status = res.status;
        await res.arrayBuffer();
        // Retry-After is honoured up to 1 s: the other instance may be fine.
        const ra = Number(res.headers.get("retry-after"));
        if (ra > 0) retryAfterMs = Math.min(1_000, ra * 1000);
      } catch {
        status = 0;
      }
      this.requests.push({ at, ms: Date.now() - at, status });
      if (status === 200) return true;
      if (status >= 400 && status < 500 && status !== 429)
        throw new Error(`ingest answered ${status} to a valid ${path} body`);
      if (!this.running) break;
      await sleep(retryAfterMs);
    }
    this.unacked++;
    return false;
  }
}

/**
 * Reads through the platform while the faults run: a session's traces, from every platform
 * instance in turn. Records status and time (target: an answer, 503 at worst, within 5 s).
 */
export class PlatformReader {
  readonly requests: RequestRecord[] = [];
  readonly unexpected: string[] = [];
  private running = false;
  private loops: Promise<void>[] = [];
  private rr = 0;

  constructor(
    private opts: {
      platformUrls: () => string[];
      tenants: Tenant[];
      sessions: Map<string, SessionRecord>;
      readersPerSecond?: number;
    },
  ) {}

  start(): void {
    this.running = true;
    const perSecond = this.opts.readersPerSecond ?? 4;
    for (let i = 0; i < 2; i++) {
      this.loops.push(
        (async () => {
          while (this.running) {
            await this.readOnce();
            await sleep(2000 / perSecond);
          }
        })(),
      );
    }
  }

  async stop(): Promise<void> {
    this.running = false;
    await Promise.all(this.loops);
  }

  private async readOnce(): Promise<void> {
    const all = [...this.opts.sessions.values()];
    if (all.length === 0) return;
    const s = all[Math.floor(Math.random() * all.length)];
    const t = this.opts.tenants[s.tenant];
    const urls = this.opts.platformUrls();
    const url = `${urls[this.rr++ % urls.length]}/api/v1/telemetry/otel/sessions/${t.serviceName}/${s.sessionId}/traces`;
    const at = Date.now();
    let status = 0;
    try {
      const res = await fetch(url, {
        headers: { authorization: `Token ${t.platformKey}` },
        signal: AbortSignal.timeout(15_000),
      });
      status = res.status;
      await res.arrayBuffer();
    } catch {
      status = 0;
    }
    // 404: a session not written yet (the processor is behind). Other 4xx would be a harness bug.
    if (status >= 400 && status < 500 && status !== 404) this.unexpected.push(`${status} ${url}`);
    this.requests.push({ at, ms: Date.now() - at, status });
  }
}

/** One HTTP server; each (tenant, receiver) pair is a path with its own signing secret. */
export class WebhookReceivers {
  readonly received: ReceivedWebhook[] = [];
  private secrets = new Map<string, Webhook>();
  private server?: ReturnType<typeof Bun.serve>;

  constructor(private failRate = 0.03) {}

  start(): string {
    this.server = Bun.serve({
      hostname: "127.0.0.1",
      port: 0,
      fetch: async (req) => {
        const receiver = new URL(req.url).pathname.slice(1);
        const body = await req.text();
        const headers = Object.fromEntries(req.headers);
        const wh = this.secrets.get(receiver);
        let valid = false;
        try {
          wh?.verify(body, headers);
          valid = !!wh;
        } catch {
          valid = false;
        }
        try {
          const parsed = JSON.parse(body) as { type: string; data: ReceivedWebhook["data"] };
          this.received.push({
            receiver,
            webhookId: headers["webhook-id"] ?? "",
            type: parsed.type,
            data: parsed.data,
            valid,
            at: Date.now(),
          });
        } catch {
          this.received.push({
            receiver,
            webhookId: headers["webhook-id"] ?? "",
            type: "unparsable",
            data: {} as ReceivedWebhook["data"],
            valid: false,
            at: Date.now(),
          });
        }
        // A few failures make the dispatcher's retry path part of the run.
        if (Math.random() < this.failRate) return new Response("try again", { status: 503 });
        return new Response(null, { status: 204 });
      },
    });
    return `http://127.0.0.1:${this.server.port}`;
  }

  register(receiver: string, secret: string): void {
    this.secrets.set(receiver, new Webhook(secret));
  }

  stop(): void {
    this.server?.stop(true);
  }
}
