import { Elysia } from "elysia";
import { HttpError } from "./errors.ts";
import type { Logger } from "./logger.ts";

export function jsonResponse(status: number, body: unknown, headers: Record<string, string> = {}): Response {
  return new Response(JSON.stringify(body), { status, headers: { "content-type": "application/json", ...headers } });
}

/** What an incoming `x-request-id` may be (else one is made up): echoed, so kept short and plain. */
export const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/**
 * The contract's error shape on every failure (`{"error": "..."}`), an `x-request-id` echoed or
 * generated on every response, and 500s that never leak internals. Mount first, `as: "global"`.
 * `mapError` turns an app's known outside failures into HttpErrors before the catch-all 500.
 */
export function httpBasics(logger: Logger, opts: { mapError?: (error: unknown) => HttpError | undefined } = {}) {
  return new Elysia({ name: "cellar-http-basics" })
    .derive({ as: "global" }, ({ request, set }) => {
      const given = request.headers.get("x-request-id");
      const requestId = given && REQUEST_ID.test(given) ? given : crypto.randomUUID();
      set.headers["x-request-id"] = requestId;
      return { requestId };
    })
    .onError({ as: "global" }, ({ error: raised, code, set, request }) => {
      // An app's own mapping of outside failures (the platform: Postgres down = 503).
      const error = (!(raised instanceof HttpError) && opts.mapError?.(raised)) || raised;
      const requestId =
        (set.headers["x-request-id"] as string) ?? request.headers.get("x-request-id") ?? crypto.randomUUID();
      const base = { "x-request-id": requestId };
      if (error instanceof HttpError) {
        return jsonResponse(error.status, { error: error.message }, { ...base, ...error.headers });
      }
      if (code === "NOT_FOUND") return jsonResponse(404, { error: "not found" }, base);
      if (code === "PARSE") return jsonResponse(400, { error: "body is not valid JSON" }, base);
      if (code === "VALIDATION") {
        // A schema's own `error` text (t.String({ error: "..." })) is the message the route chose.
        const custom = (error as { customError?: unknown }).customError;
        if (typeof custom === "string" && custom) return jsonResponse(400, { error: custom }, base);
        const first = (error as { all?: Array<{ path?: string; summary?: string; message?: string }> }).all?.[0];
        const field = first?.path ? first.path.replace(/^\//, "").replace(/\//g, ".") : "request";
        return jsonResponse(400, { error: `invalid ${field}: ${first?.message ?? "does not match the schema"}` }, base);
      }
      logger.error("unhandled error", { requestId, err: error as Error, path: new URL(request.url).pathname });
      return jsonResponse(500, { error: "internal server error" }, base);
    });
}
