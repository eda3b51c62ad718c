import { HttpError, serviceUnavailable } from "@cellar/shared/errors";
import type { ResolvedKey } from "@cellar/shared/auth/keys";
import { createLogger } from "@cellar/shared/logger";
import { createRateLimiter } from "@cellar/shared/rate-limit";
import type { IngestPipeline } from "../src/pipeline.ts";
import { messageIdFor, type StoreInput } from "../src/publish.ts";

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
  const limiter = createRateLimiter({
    perSecond: opts.rateLimit?.perSecond ?? 0,
    burst: opts.rateLimit?.burst ?? 1,
    now: () => 0,
  });
  const pipeline: IngestPipeline = {
    async authenticate(request) {
      if (request.headers.get("authorization") !== "Bearer good") throw new HttpError(401, "unauthorized");
      return { key, cors: {} };
    },
    takeRateTokens: (id, count) => limiter.take(id, count),
    hasRateToken: (id) => limiter.allows(id),
    rateBurst: opts.rateLimit ? opts.rateLimit.burst : null,
    async store(input) {
      if (opts.failStore) throw serviceUnavailable("storage temporarily unavailable, retry later", 5);
      const messageId = messageIdFor(input);
      stored.push({ ...input, messageId });
      return { messageId, duplicate: false };
    },
    maxBodyBytes: opts.maxBodyBytes ?? 256 * 1024,
    logger: createLogger("silent"),
  };
  return { pipeline, stored, key };
}

export function jsonRequest(path: string, body: unknown, headers: Record<string, string> = {}): Request {
  return new Request(`http://ingest.test${path}`, {
    method: "POST",
    headers: { authorization: "Bearer good", "content-type": "application/json", ...headers },
    body: typeof body === "string" || body instanceof Uint8Array ? (body as BodyInit) : JSON.stringify(body),
  });
}
