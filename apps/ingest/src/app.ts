import { Elysia } from "elysia";
import type { JetStreamClient } from "@nats-io/jetstream";
import { canonicalJson, sha256Hex } from "../../../shared/crypto";
import { badRequest, forbidden, HttpError, serviceUnavailable, unauthorized } from "../../../shared/errors";
import { httpBasics, jsonResponse } from "../../../shared/http";
import type { KeyResolver, ResolvedKey } from "../../../shared/auth/keys";
import type { Logger } from "../../../shared/logger";
import { subjects, type Topology } from "../../../shared/nats/topology";
import { EventPayload, TracePayload, isIsoDateTime, type IngestMessage } from "../../../shared/payloads";
import { compileValidator } from "../../../shared/validation";

export interface IngestDeps {
  js: JetStreamClient;
  topology: Topology;
  keys: KeyResolver;
  logger: Logger;
  maxBodyBytes: number;
  /** How long to wait for JetStream's PubAck before answering 503. */
  publishTimeoutMs?: number;
  now?: () => Date;
}

const traceValidator = compileValidator(TracePayload);
const eventValidator = compileValidator(EventPayload);

/** The write-only ingestion host: POST /raw/traces and /raw/events. */
export function createIngestApp(deps: IngestDeps) {
  const now = deps.now ?? (() => new Date());

  async function authenticate(request: Request): Promise<ResolvedKey> {
    const header = request.headers.get("authorization") ?? "";
    const match = /^Bearer ([^\s]+)$/.exec(header);
    if (!match) throw unauthorized();
    const key = await deps.keys.resolve(match[1]);
    if (!key || key.kind === "platform") throw unauthorized();
    if (key.kind === "dsn-client" && key.allowedOrigins?.length) {
      const origin = request.headers.get("origin");
      if (!origin || !key.allowedOrigins.includes(origin)) throw forbidden("origin not allowed for this DSN");
    }
    return key;
  }

  async function readJson(request: Request): Promise<unknown> {
    const type = request.headers.get("content-type") ?? "";
    if (!/^application\/json\s*(;|$)/i.test(type)) {
      throw new HttpError(415, "content-type must be application/json");
    }
    const declared = Number(request.headers.get("content-length") ?? "0");
    if (declared > deps.maxBodyBytes) throw new HttpError(413, `body exceeds ${deps.maxBodyBytes} bytes`);
    const text = await request.text();
    if (new TextEncoder().encode(text).length > deps.maxBodyBytes) throw new HttpError(413, `body exceeds ${deps.maxBodyBytes} bytes`);
    try {
      return JSON.parse(text);
    } catch {
      throw badRequest("body is not valid JSON");
    }
  }

  function resolveServiceName(key: ResolvedKey, payload: { service_name?: string }): string {
    if (key.kind === "dsn-server" || key.kind === "dsn-client") {
      if (payload.service_name !== undefined && payload.service_name !== key.serviceName) {
        throw forbidden(`service_name "${payload.service_name}" does not match this DSN's service`);
      }
      return key.serviceName!;
    }
    if (payload.service_name === undefined) throw badRequest("invalid service_name: required");
    return payload.service_name;
  }

  async function store(kind: "trace" | "event", key: ResolvedKey, serviceName: string, payload: TracePayload | EventPayload) {
    // Same tenant + same canonical body = same id: a client retry is stored once.
    const messageId = await sha256Hex(`${key.tenantId}\n${kind}\n${canonicalJson(payload)}`);
    const message = { kind, messageId, tenantId: key.tenantId, serviceName, receivedAt: now().toISOString(), payload } as IngestMessage;
    const subject = kind === "trace" ? subjects.ingestTrace(deps.topology) : subjects.ingestEvent(deps.topology);
    try {
      await deps.js.publish(subject, JSON.stringify(message), { msgID: messageId, timeout: deps.publishTimeoutMs ?? 5_000 });
    } catch (err) {
      deps.logger.warn("publish to INGEST failed", { err: err as Error, messageId });
      throw serviceUnavailable("storage temporarily unavailable, retry later", 5);
    }
  }

  return new Elysia({ name: "ingest" })
    .use(httpBasics(deps.logger))
    .post(
      "/raw/traces",
      async ({ request }) => {
        const key = await authenticate(request);
        const body = await readJson(request);
        const problem = traceValidator.firstError(body);
        if (problem) throw badRequest(problem);
        const payload = body as TracePayload;
        if (!isIsoDateTime(payload.start_time)) throw badRequest("invalid start_time: must be an ISO 8601 date-time");
        if (Date.parse(payload.end_time) < Date.parse(payload.start_time)) throw badRequest("invalid end_time: must not be before start_time");
        const serviceName = resolveServiceName(key, payload);
        await store("trace", key, serviceName, payload);
        return jsonResponse(200, { status: "success" });
      },
      { parse: "none" },
    )
    .post(
      "/raw/events",
      async ({ request }) => {
        const key = await authenticate(request);
        const body = await readJson(request);
        const problem = eventValidator.firstError(body);
        if (problem) throw badRequest(problem);
        const payload = body as EventPayload;
        const serviceName = resolveServiceName(key, payload);
        await store("event", key, serviceName, payload);
        return jsonResponse(200, { status: "success" });
      },
      { parse: "none" },
    );
}
