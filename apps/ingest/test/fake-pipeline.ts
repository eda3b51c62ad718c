import { HttpError, serviceUnavailable } from "@cellar/shared/errors";
import type { ResolvedKey } from "@cellar/shared/auth/keys";
import { createLogger } from "@cellar/shared/logger";
import { createFairTurns } from "@cellar/shared/fair-turns";
import { createRateLimiter } from "@cellar/shared/rate-limit";
import type { IngestPipeline } from "../src/pipeline.ts";
import { type BuiltMessage, messageIdFor, type StoreInput } from "../src/publish.ts";

/**
 * A pipeline of fakes for driving one handler on its own: a fixed key (no Postgres), a real
 * token bucket, and a store that records what it was given (no NATS) or fails on demand.
 */
export function fakePipeline(
  opts: {
    key?: Partial<ResolvedKey>;
    rateLimit?: { perSecond: number; burst: number };
    failStore?: boolean;
    maxBodyBytes?: number;
    /** The token bucket's clock (ms; default always 0). */
    now?: () => number;
  } = {},
) {
  const key: ResolvedKey = {
    id: "key-1",
    tenantId: "00000000-0000-4000-8000-000000000001",
    kind: "telemetry",
    serviceName: null,
    allowedOrigins: null,
    userId: null,
    userRole: null,
    tenantPlan: "pro",
    ...opts.key,
  };
  const stored: Array<StoreInput & { messageId: string }> = [];
  const built: BuiltMessage[] = [];
  const limiter = createRateLimiter({
    perSecond: opts.rateLimit?.perSecond ?? 0,
    burst: opts.rateLimit?.burst ?? 1,
    now: () => opts.now?.() ?? 0,
  });
  const pipeline: IngestPipeline = {
    async authenticate(request) {
      if (request.headers.get("authorization") !== "Bearer good") throw new HttpError(401, "unauthorized");
      return { key, cors: {} };
    },
    takeRateTokens: (id, count) => limiter.take(id, count),
    reserveRateTokens: (id, door) => limiter.reserve(id, door),
    async store(input) {
      if (opts.failStore) throw serviceUnavailable("storage temporarily unavailable, retry later", 5);
      const messageId = messageIdFor(input);
      stored.push({ ...input, messageId });
      return { messageId, duplicate: false };
    },
    // The batch door's one message: recorded item by item, each with the id its single door gives.
    async storeAll(inputs) {
      if (opts.failStore) throw serviceUnavailable("storage temporarily unavailable, retry later", 5);
      for (const input of inputs) stored.push({ ...input, messageId: messageIdFor(input) });
      return [{ messageId: "batch", duplicate: false, inputs }];
    },
    // An offload thread's messages (tests of the offload give real ones): recorded as counts.
    async storeBuilt(messages) {
      if (opts.failStore) throw serviceUnavailable("storage temporarily unavailable, retry later", 5);
      built.push(...messages);
      return messages.map((m) => ({ messageId: m.messageId, duplicate: false, services: m.services }));
    },
    turn: createFairTurns().take,
    maxBodyBytes: opts.maxBodyBytes ?? 256 * 1024,
    logger: createLogger("silent"),
  };
  return { pipeline, stored, built, key };
}

export function jsonRequest(path: string, body: unknown, headers: Record<string, string> = {}): Request {
  return new Request(`http://ingest.test${path}`, {
    method: "POST",
    headers: { authorization: "Bearer good", "content-type": "application/json", ...headers },
    body:
      typeof body === "string" || body instanceof Uint8Array || body instanceof ReadableStream
        ? (body as BodyInit)
        : JSON.stringify(body),
  });
}

/**
 * A request body that counts how many of its chunks were pulled: a refusal before the body is
 * read leaves it at 0 (the cost of a refusal does not grow with the body).
 */
export function unreadBody(content: string | Uint8Array, chunkBytes = 16 * 1024) {
  const bytes = typeof content === "string" ? new TextEncoder().encode(content) : content;
  let at = 0;
  let pulled = 0;
  const body = new ReadableStream<Uint8Array>(
    {
      pull(controller) {
        pulled++;
        if (at >= bytes.byteLength) return controller.close();
        controller.enqueue(bytes.subarray(at, at + chunkBytes));
        at += chunkBytes;
      },
    },
    { highWaterMark: 0 },
  ); // nothing pulled until someone reads
  return { body, pulled: () => pulled };
}

/**
 * A request body held back until `release()`: requests sent with such bodies are all admitted
 * before any of them is counted (the herd of a client's first concurrent requests).
 */
export function heldBody(content: string | Uint8Array) {
  let release!: () => void;
  const go = new Promise<void>((r) => (release = r));
  const body = new ReadableStream<Uint8Array>({
    async start(controller) {
      await go;
      controller.enqueue(typeof content === "string" ? new TextEncoder().encode(content) : content);
      controller.close();
    },
  });
  return { body, release };
}
