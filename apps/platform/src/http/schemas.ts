import { t, type TSchema } from "elysia";

/** Timestamps in responses: ISO 8601 in UTC (`toISOString()`). */
export const Iso = t.String({ format: "date-time" });
export const Nullable = <T extends TSchema>(schema: T) => t.Union([schema, t.Null()]);
/** Free-form JSON as stored (payloads, attributes, analysis evidence). */
export const AnyJson = t.Unknown();
export const JsonObject = t.Record(t.String(), t.Unknown());

/** Offset paging block shared by every list read. `total` is null when the count was skipped. */
export const Pagination = t.Object({
  limit: t.Integer(),
  offset: t.Integer(),
  total: Nullable(t.Integer()),
  hasMore: t.Boolean(),
  nextOffset: Nullable(t.Integer()),
  // Keyset paging (docs/platform-api.md): present on the reads that take `cursor`.
  nextCursor: t.Optional(
    Nullable(t.String({ description: "Pass back as `cursor` for the next page; null on the last page" })),
  ),
});

/** An integer query parameter whose 400 names it (Elysia's own message cannot). */
export const intQuery = (name: string, min: number, max: number, def: number) =>
  t.Optional(
    t.Integer({
      minimum: min,
      maximum: max,
      default: def,
      error: `invalid ${name}: must be an integer from ${min} to ${max}`,
    }),
  );

export const offsetQuery = (name = "offset", max = 1_000_000, hint = "") =>
  t.Optional(
    t.Integer({
      minimum: 0,
      maximum: max,
      default: 0,
      error: `invalid ${name}: must be an integer from 0 to ${max}${hint}`,
    }),
  );

/** A required, non-empty query parameter: missing or empty is 400 "<name> query parameter is required". */
export const requiredQuery = (name: string) =>
  t.String({ minLength: 1, maxLength: 512, error: `${name} query parameter is required` });

export const optionalIsoQuery = (name: string) =>
  t.Optional(t.String({ format: "date-time", error: `invalid ${name}: must be an ISO 8601 date-time` }));

export const ERROR_STATUSES = {
  400: "Invalid request",
  401: "Missing or invalid Token",
  402: "Plan does not include the endpoint",
  403: "Role or project membership does not cover the service",
  404: "Not found in the key's tenant",
  409: "Conflicts with what is stored now (the message says what)",
  413: "Body larger than the platform reads (64 KiB)",
  429: "Too many requests for this key: try again after Retry-After",
  503: "Unavailable for now: try again after Retry-After",
} as const;

/**
 * The errors of a read whose input a caller cannot get wrong (path values only, each looked up):
 * no 400. What every route answers besides (401, 429, 503) the OpenAPI builder adds.
 */
export const LOOKUP_ERRORS: Array<keyof typeof ERROR_STATUSES> = [401, 403, 404];

/**
 * Route documentation: summary, tag and the success body schema. The OpenAPI builder reads it from
 * the route's `detail`; tests check real responses against the same `response` schema.
 */
export function doc(
  tag: string,
  summary: string,
  response: TSchema,
  extra: {
    description?: string;
    errors?: Array<keyof typeof ERROR_STATUSES>;
    rename?: Record<string, string>;
    status?: number;
    /** The request body of a route that parses its body by hand (no `body` hook): documented, not enforced. */
    request?: TSchema;
    /** A second success status with the same body (200 for an idempotent create that found its earlier result). */
    alsoStatus?: number;
    /** false on a route not counted against the per-key request limit (it never answers 429 for it). */
    perKeyLimit?: boolean;
  } = {},
) {
  return {
    tags: [tag],
    summary,
    ...(extra.description ? { description: extra.description } : {}),
    "x-cellar-response": response,
    "x-cellar-errors": extra.errors ?? [400, 401, 403, 404],
    // The router needs one parameter name per path position (`/:serviceName/stats` and
    // `/:issueId/breakdown` collide), so a route may use a shared name and document its own.
    ...(extra.rename ? { "x-cellar-rename": extra.rename } : {}),
    // Success status when not 200 (201 created, 202 accepted, 204 without a body).
    ...(extra.status ? { "x-cellar-status": extra.status } : {}),
    ...(extra.request ? { "x-cellar-request": extra.request } : {}),
    ...(extra.alsoStatus ? { "x-cellar-also-status": extra.alsoStatus } : {}),
    ...(extra.perKeyLimit === false ? { "x-cellar-per-key-limit": false } : {}),
  } as Record<string, unknown>;
}

export const iso = (d: Date | string | null | undefined): string | null =>
  d == null ? null : new Date(d).toISOString();
export const isoNN = (d: Date | string): string => new Date(d).toISOString();

/** Offset pagination from a page of rows (fetch limit + 1 to know `hasMore` without a count). */
export function paginate(limit: number, offset: number, returned: number, more: boolean, total: number | null) {
  const hasMore = total === null ? more : offset + returned < total;
  return { limit, offset, total, hasMore, nextOffset: hasMore ? offset + returned : null };
}
