import { parseJsonStrict, readBodyText, requireJsonContentType } from "./body.ts";
import { answerErrors, type IngestPipeline, serviceNameFor } from "./pipeline.ts";
import type { EventPayload, TracePayload } from "@cellar/shared/payloads";
import { validateEvent, validateKeepingText, validateTrace } from "./validate.ts";

export type RawKind = "trace" | "event";

const SUCCESS = JSON.stringify({ status: "success" });

/**
 * POST /raw/traces and /raw/events (contract: Ingestion): authenticate, rate limit, read and
 * validate the body, answer 200 only after JetStream stored it. Errors become responses here so
 * the CORS and rate-limit headers survive.
 */
export async function postRaw(
  pipeline: IngestPipeline,
  kind: RawKind,
  request: Request,
  requestId: string,
  client: string | undefined,
): Promise<Response> {
  return answerErrors(requestId, async (headers) => {
    const { key, cors } = await pipeline.authenticate(request, client);
    Object.assign(headers, cors, pipeline.takeRateTokens(key.id));
    requireJsonContentType(request);
    const text = await readBodyText(request, pipeline.maxBodyBytes);
    // Parsed, checked and published in this tenant's turn (pipeline.ts): behind at most one slice
    // of each other tenant's work, not behind every request that arrived with it.
    await pipeline.turn(key.tenantId);
    const body = parseJsonStrict(text);
    // Before validation rewrites timestamps: the batch door hashes an item's body the same way.
    const idSource = JSON.stringify(body);
    const { payload, payloadText } = validateKeepingText<TracePayload | EventPayload>(
      kind === "trace" ? validateTrace : validateEvent,
      body,
      idSource,
    );
    const serviceName = serviceNameFor(key, payload.service_name);
    await pipeline.store({ kind, tenantId: key.tenantId, serviceName, payload, idSource, payloadText });
    return new Response(SUCCESS, { status: 200, headers: { "content-type": "application/json", ...headers } });
  });
}
