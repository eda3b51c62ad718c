import { t } from "elysia";
import type { TBoolean, TInteger, TObject, TOptional, TString } from "@sinclair/typebox";
import { badRequest } from "@cellar/shared/errors";
import { CURSOR_MAX_CHARS } from "../query/keyset.ts";
import {
  describeFields,
  type FilterItem as QueryFilterItem,
  type FilterSet,
  MAX_FILTERED_OFFSET,
  type PagedQuery,
} from "../query/filters.ts";

/**
 * The HTTP binding of a filtered search: the request schemas (filters, sort, page, cursor), the
 * strict-body check, and the validated body as a PagedQuery. What they mean in SQL is
 * query/filters.ts; these names stay importable from here for the binding's own tests.
 */
export { compileFilters, compileSort, type FilterSet } from "../query/filters.ts";

export const FilterItem = t.Object(
  {
    field: t.String({ minLength: 1, maxLength: 100, error: "invalid filters: each filter needs a field string" }),
    operator: t.String({ minLength: 1, maxLength: 32, error: "invalid filters: each filter needs an operator string" }),
    value: t.Union(
      [
        t.String({ maxLength: 1000 }),
        t.Number(),
        t.Boolean(),
        t.Array(t.Union([t.String({ maxLength: 1000 }), t.Number()]), { maxItems: 100 }),
      ],
      {
        error: "invalid filters: value must be a string, number, boolean or array of up to 100 strings/numbers",
      },
    ),
  },
  { additionalProperties: false },
);
export type FilterItem = QueryFilterItem;

export const Filters = t.Optional(
  t.Array(FilterItem, {
    maxItems: 50,
    error: "invalid filters: must be an array of up to 50 {field, operator, value} objects",
  }),
);
export const Sort = (fields: string[], name = "sort") =>
  t.Optional(
    t.Object(
      {
        field: t.String({ minLength: 1, maxLength: 100, description: `One of: ${fields.join(", ")}` }),
        direction: t.Optional(
          t.Union([t.Literal("asc"), t.Literal("desc")], {
            default: "desc",
            error: `invalid ${name}.direction: must be asc or desc`,
          }),
        ),
      },
      {
        additionalProperties: false,
        error: `invalid ${name}: must be {"field": <sortable field>, "direction": "asc"|"desc"}`,
      },
    ),
  );

/**
 * Body of a `.../filtered` search. Sessions and traces name the service `serviceName`, issues and
 * findings `service_name` (contract); the other keys follow the same convention per endpoint.
 */
export function filteredBody<K extends string, C extends string>(serviceKey: K, countKey: C, set: FilterSet) {
  return t.Object(
    {
      [serviceKey]: t.String({
        minLength: 1,
        maxLength: 200,
        error: `invalid ${serviceKey}: required, a non-empty string`,
      }),
      filters: Filters,
      sort: Sort(Object.keys(set.fields)),
      limit: t.Optional(
        t.Integer({ minimum: 1, maximum: 500, default: 50, error: "invalid limit: must be an integer from 1 to 500" }),
      ),
      offset: t.Optional(
        t.Integer({
          minimum: 0,
          maximum: MAX_FILTERED_OFFSET,
          default: 0,
          error: `invalid offset: must be an integer from 0 to ${MAX_FILTERED_OFFSET}; page deeper with cursor (pagination.nextCursor)`,
        }),
      ),
      cursor: t.Optional(
        t.String({
          minLength: 1,
          maxLength: CURSOR_MAX_CHARS,
          error: "invalid cursor: must be the pagination.nextCursor string of a previous page",
        }),
      ),
      [countKey]: t.Optional(t.Boolean({ default: false, error: `invalid ${countKey}: must be a boolean` })),
    },
    // Unknown keys are 400 naming them: a typo (`filter`) must not silently return everything.
    { additionalProperties: false, description: `Filter fields (field: type; operators): ${describeFields(set)}` },
  ) as unknown as TObject<
    { [P in K]: TString } & { [P in C]: TOptional<TBoolean> } & {
      filters: typeof Filters;
      sort: ReturnType<typeof Sort>;
      limit: TOptional<TInteger>;
      offset: TOptional<TInteger>;
      cursor: TOptional<TString>;
    }
  >;
}

/** The PagedQuery of a validated filtered body (defaults applied). */
export function pagedQuery(body: Record<string, unknown>, countKey: string): PagedQuery {
  return {
    filters: body.filters as FilterItem[] | undefined,
    sort: body.sort as PagedQuery["sort"],
    limit: (body.limit as number | undefined) ?? 50,
    offset: (body.offset as number | undefined) ?? 0,
    skipTotalCount: (body[countKey] as boolean | undefined) ?? false,
    cursor: body.cursor as string | undefined,
    service: (body.serviceName ?? body.service_name) as string | undefined,
  };
}

/** The first key of `value` that `schema` does not declare (objects marked additionalProperties: false). */
export function unknownKey(schema: any, value: unknown, path = ""): string | null {
  if (schema?.anyOf) return null; // unions: left to validation
  if (schema?.type === "array" && Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const hit = unknownKey(schema.items, value[i], `${path}[${i}]`);
      if (hit) return hit;
    }
    return null;
  }
  if (schema?.type !== "object" || !value || typeof value !== "object" || Array.isArray(value)) return null;
  for (const [k, v] of Object.entries(value)) {
    const name = path ? `${path}.${k}` : k;
    const prop = schema.properties?.[k];
    if (!prop) {
      if (schema.additionalProperties === false) return name;
      continue;
    }
    const hit = unknownKey(prop, v, name);
    if (hit) return hit;
  }
  return null;
}

/**
 * A route `transform` that rejects unknown body keys with a 400 naming them. Elysia's validation
 * strips undeclared keys silently, and a typo (`filter` for `filters`) must not return everything.
 */
export const strictBody =
  (schema: unknown) =>
  ({ body }: { body: unknown }) => {
    const key = unknownKey(schema, body);
    if (key) throw badRequest(`invalid ${key}: unknown field`);
  };
