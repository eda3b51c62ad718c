import type postgres from "postgres";
import { t } from "elysia";
import type { TBoolean, TInteger, TObject, TOptional, TString } from "@sinclair/typebox";
import { badRequest } from "@cellar/shared/errors";
import { paginate } from "./schemas.ts";
import {
  afterCursor,
  CURSOR_MAX_CHARS,
  cursorAfter,
  cursorQuery,
  decodeCursor,
  keyColumns,
  queryHash,
} from "./keyset.ts";
import { analysisJoin, analysisSortedPage, countsOnAnalysis, type AnalysisTable } from "./analysis-path.ts";
import { fewMatchesPage } from "./few-matches.ts";

type Sql = postgres.Sql;
type Fragment = postgres.PendingQuery<postgres.Row[]>;

export type FieldType = "string" | "enum" | "number" | "datetime" | "labels";

/** Operators per field type (documented in docs/platform-api.md). */
export const OPERATORS: Record<FieldType, readonly string[]> = {
  string: ["equals", "notEquals", "in", "notIn", "contains", "startsWith"],
  enum: ["equals", "notEquals", "in", "notIn"],
  number: ["equals", "notEquals", "gt", "gte", "lt", "lte"],
  datetime: ["gt", "gte", "lt", "lte"],
  labels: ["equals", "notEquals", "in"],
};

export interface FieldSpec {
  type: FieldType;
  /** SQL expression over the query's aliases; a function when it needs a parameter. */
  expr: string | ((sql: Sql) => Fragment);
  values?: readonly string[];
  sortable?: boolean;
  /** Never null: sort without a NULLS clause so a b-tree index (scanned either way) serves it. */
  notNull?: boolean;
  /** Reads the joined table (analysis rollups): the join must happen before filtering. */
  joined?: boolean;
  /** An integer column: a bound of any finite number compares as the integer bound it implies. */
  integer?: boolean;
}

/** A family of numeric fields named by a prefix, e.g. `metrics.` -> `metrics.costUsd`. */
export interface DynamicField {
  prefix: string;
  expr: (sql: Sql, name: string) => Fragment;
  /** Names after the prefix this family takes (default: a letter, then letters, digits, `_`). */
  name?: RegExp;
  sortable?: boolean;
  /** Reads the joined analysis table (default true). */
  joined?: boolean;
}

export interface FilterSet {
  fields: Record<string, FieldSpec>;
  dynamic?: DynamicField | DynamicField[];
}

const dynamicsOf = (set: FilterSet): DynamicField[] =>
  set.dynamic === undefined ? [] : Array.isArray(set.dynamic) ? set.dynamic : [set.dynamic];

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
export type FilterItem = { field: string; operator: string; value: unknown };

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
 * `metrics.<name>` over the `metrics` JSON object of table alias `alias` (non-numbers are null).
 * `typed` names keys that also have a typed column holding exactly that value (migration 0009):
 * those filters read the column, which has an index.
 */
export const metricsField = (alias: string, typed: Record<string, string> = {}): DynamicField => ({
  prefix: "metrics.",
  expr: (sql, name) =>
    Object.hasOwn(typed, name)
      ? sql.unsafe(`${alias}.${typed[name]}`)
      : sql`(case when jsonb_typeof(${sql.unsafe(alias)}.metrics -> ${name}) = 'number' then (${sql.unsafe(alias)}.metrics ->> ${name})::float8 end)`,
});

const DYNAMIC_NAME = /^[A-Za-z][A-Za-z0-9_]{0,63}$/;

function resolveField(set: FilterSet, field: string, at: string): FieldSpec {
  const known = set.fields[field];
  if (known) return known;
  for (const d of dynamicsOf(set)) {
    if (!field.startsWith(d.prefix)) continue;
    const name = field.slice(d.prefix.length);
    if ((d.name ?? DYNAMIC_NAME).test(name))
      return { type: "number", expr: (sql) => d.expr(sql, name), joined: d.joined ?? true, sortable: d.sortable };
  }
  const names = Object.keys(set.fields).concat(dynamicsOf(set).map((d) => `${d.prefix}<name>`));
  throw badRequest(`unknown filter field ${JSON.stringify(field)} in ${at}; known fields: ${names.join(", ")}`);
}

const exprOf = (sql: Sql, spec: FieldSpec): Fragment =>
  typeof spec.expr === "string" ? sql.unsafe(spec.expr) : spec.expr(sql);
const likeEscape = (s: string) => s.replace(/[\\%_]/g, (c) => `\\${c}`);

function scalar(f: FilterItem, spec: FieldSpec, at: string): string | number | Date {
  const v = f.value;
  if (spec.type === "number") {
    if (typeof v !== "number" || !Number.isFinite(v))
      throw badRequest(`invalid ${at}.value: ${f.field} takes a number`);
    return v;
  }
  if (spec.type === "datetime") {
    const ms = typeof v === "string" ? Date.parse(v) : NaN;
    if (Number.isNaN(ms)) throw badRequest(`invalid ${at}.value: ${f.field} takes an ISO 8601 date-time`);
    return new Date(ms);
  }
  if (typeof v !== "string") throw badRequest(`invalid ${at}.value: ${f.field} with ${f.operator} takes a string`);
  if (spec.type === "enum" && !spec.values!.includes(v))
    throw badRequest(`invalid ${at}.value: ${f.field} is one of ${spec.values!.join(", ")}`);
  return v;
}

function list(f: FilterItem, spec: FieldSpec, at: string): string[] {
  const v = f.value;
  if (!Array.isArray(v) || v.length === 0 || v.some((x) => typeof x !== "string")) {
    throw badRequest(`invalid ${at}.value: ${f.operator} takes a non-empty array of strings`);
  }
  const values = v as string[];
  const bad = spec.type === "enum" ? values.find((x) => !spec.values!.includes(x)) : undefined;
  if (bad !== undefined)
    throw badRequest(`invalid ${at}.value: ${JSON.stringify(bad)} is not one of ${spec.values!.join(", ")}`);
  return values;
}

function one(sql: Sql, set: FilterSet, f: FilterItem, at: string): Fragment {
  const spec = resolveField(set, f.field, `${at}.field`);
  const allowed = OPERATORS[spec.type];
  if (!allowed.includes(f.operator)) {
    throw badRequest(
      `unknown operator ${JSON.stringify(f.operator)} for field ${JSON.stringify(f.field)} in ${at}.operator; allowed: ${allowed.join(", ")}`,
    );
  }
  const e = exprOf(sql, spec);
  if (spec.integer) return integerCompare(sql, e, f.operator, scalar(f, spec, at) as number);
  if (spec.type === "labels") {
    if (f.operator === "in") return sql`${e} ?| ${list(f, spec, at)}::text[]`;
    const label = scalar(f, spec, at) as string;
    return f.operator === "equals" ? sql`${e} ? ${label}` : sql`not (${e} ? ${label})`;
  }
  switch (f.operator) {
    case "in":
      return sql`${e} = any(${list(f, spec, at)}::text[])`;
    case "notIn":
      return sql`(${e} is null or not (${e} = any(${list(f, spec, at)}::text[])))`;
    case "contains":
      return sql`${e} ilike ${"%" + likeEscape(scalar(f, spec, at) as string) + "%"}`;
    case "startsWith":
      return sql`${e} like ${likeEscape(scalar(f, spec, at) as string) + "%"}`;
    case "notEquals":
      return sql`${e} is distinct from ${scalar(f, spec, at)}`;
  }
  const v = scalar(f, spec, at);
  const op = { equals: "=", gt: ">", gte: ">=", lt: "<", lte: "<=" }[f.operator]!;
  return sql`${e} ${sql.unsafe(op)} ${v}`;
}

/**
 * An integer column against any finite number, as the integer comparison it equals (`v > 2.5`
 * is `v > 2`, `v = 2.5` matches nothing, `v is distinct from 2.5` everything), with the bound
 * typed int8: the column's b-tree serves an int4-int8 comparison, and a fraction or a bound past
 * the int4 range (which Postgres refused with a 500 when the parameter took the column's type)
 * answers what it means. Bounds are clamped to +-2^53, far beyond any int4 value.
 */
function integerCompare(sql: Sql, e: Fragment, operator: string, value: number): Fragment {
  const x = Math.max(-(2 ** 53), Math.min(2 ** 53, value));
  const whole = Number.isInteger(x);
  switch (operator) {
    case "equals":
      return whole ? sql`${e} = ${x}::int8` : sql`false`;
    case "notEquals":
      return whole ? sql`${e} is distinct from ${x}::int8` : sql`true`;
    case "gt":
      return sql`${e} > ${Math.floor(x)}::int8`;
    case "gte":
      return sql`${e} >= ${Math.ceil(x)}::int8`;
    case "lt":
      return sql`${e} < ${Math.ceil(x)}::int8`;
    default: // lte (OPERATORS.number)
      return sql`${e} <= ${Math.floor(x)}::int8`;
  }
}

/** `filters` as one SQL condition (AND of all); 400 names an unknown field, operator or bad value. */
export function compileFilters(sql: Sql, set: FilterSet, filters: FilterItem[] | undefined): Fragment {
  let where = sql`true`;
  (filters ?? []).forEach((f, i) => {
    where = sql`${where} and ${one(sql, set, f, `filters[${i}]`)}`;
  });
  return where;
}

/** ORDER BY for `sort`; ties broken by `tiebreak` so offset pages are stable. */
export function compileSort(
  sql: Sql,
  set: FilterSet,
  sort: { field: string; direction?: "asc" | "desc" } | undefined,
  fallback: string,
  tiebreak: string,
): Fragment {
  const field = sort?.field ?? fallback;
  const spec = sortableField(set, field);
  if (!spec?.sortable) {
    const sortable = Object.entries(set.fields)
      .filter(([, s]) => s.sortable)
      .map(([n]) => n);
    throw badRequest(
      `invalid sort.field: ${JSON.stringify(field)} is not sortable; sortable fields: ${sortable.join(", ")}`,
    );
  }
  const dir = sql.unsafe(sort?.direction === "asc" ? "asc" : "desc");
  const nulls = sql.unsafe(spec.notNull ? "" : "nulls last");
  return sql`${exprOf(sql, spec)} ${dir} ${nulls}, ${sql.unsafe(tiebreak)} ${dir}`;
}

/** A sort key: a declared field, or a sortable dynamic one (`scores.<name>`). */
function sortableField(set: FilterSet, field: string): FieldSpec | undefined {
  if (set.fields[field]) return set.fields[field];
  try {
    return resolveField(set, field, "sort.field");
  } catch {
    return undefined;
  }
}

/** A human-readable list for docs and OpenAPI descriptions. */
export function describeFields(set: FilterSet): string {
  const rows = Object.entries(set.fields).map(
    ([n, s]) => `${n} (${s.type}${s.values ? `: ${s.values.join("|")}` : ""}; ${OPERATORS[s.type].join(", ")})`,
  );
  for (const d of dynamicsOf(set)) rows.push(`${d.prefix}<name> (number; ${OPERATORS.number.join(", ")})`);
  return rows.join("; ");
}

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

export interface PagedQuery {
  filters?: FilterItem[];
  sort?: { field: string; direction?: "asc" | "desc" };
  limit: number;
  offset: number;
  skipTotalCount: boolean;
  /** pagination.nextCursor of a previous page (keyset paging); excludes a non-zero offset. */
  cursor?: string;
  /** The service named in the body: a cursor is only valid for the same service. */
  service?: string;
}

/** Deepest offset a filtered search takes; past it the 400 points at `cursor`. */
export const MAX_FILTERED_OFFSET = 100_000;

/**
 * Runs a filtered, sorted, offset-paged search over `table alias` within `scope` (the tenant and
 * service condition). `analysis` is the left-joined analysis table: when no filter or sort reads
 * it, the page is cut on the base table first and joined after, so a deep offset walks index
 * entries instead of joining every skipped row; a sort on one of its fields, and a total whose
 * filters all read it, use its own indexes (./analysis-path.ts). The page fetches one row more
 * than asked so `hasMore` is known even when the count is skipped.
 */
export async function runFiltered(
  sql: Sql,
  spec: {
    set: FilterSet;
    columns: string;
    table: string;
    alias: string;
    scope: Fragment;
    analysis?: AnalysisTable;
    defaultSort: string;
    tiebreak: string;
  },
  q: PagedQuery,
) {
  const where = compileFilters(sql, spec.set, q.filters);
  const order = compileSort(sql, spec.set, q.sort, spec.defaultSort, spec.tiebreak);
  const sortField = q.sort?.field ?? spec.defaultSort;
  const direction = q.sort?.direction === "asc" ? "asc" : "desc";
  const used = [...(q.filters ?? []).map((f) => f.field), sortField];
  const needsJoin = used.some((f) => resolveField(spec.set, f, "").joined);
  const byAnalysis = (q.filters ?? []).map((f) => ({
    joined: Boolean(resolveField(spec.set, f.field, "").joined),
    operator: f.operator,
  }));
  // Keyset: the sort expression and the tiebreak of the page's last row make the next cursor.
  const sortSpec = sortableField(spec.set, sortField)!;
  const sortExpr = typeof sortSpec.expr === "string" ? sortSpec.expr : null;
  const hash = queryHash([spec.table, q.service ?? null, q.filters ?? [], sortField, direction]);
  if (q.cursor && q.offset > 0)
    throw badRequest("invalid offset: cannot be combined with cursor (the cursor carries its position)");
  if (q.cursor && !sortExpr) throw badRequest(`invalid cursor: sorting by ${sortField} pages by offset only`);
  const cursor = q.cursor ? decodeCursor(q.cursor, hash, 2) : null;
  const offset = cursor ? cursor.o : q.offset;
  const seek =
    cursor && sortExpr
      ? afterCursor(sql, sortExpr, spec.tiebreak, direction, Boolean(sortSpec.notNull), cursor)
      : sql`true`;
  const keys = sortExpr ? `, ${keyColumns([sortExpr, spec.tiebreak])}` : "";
  const baseTable = `${spec.table} ${spec.alias}`;
  const base = sql`${sql.unsafe(baseTable)}`;
  const join = spec.analysis ? analysisJoin(sql, spec.analysis) : sql``;
  const filtered = sql`${base} ${needsJoin ? join : sql``} where ${spec.scope} and ${where}`;
  const limit = cursor ? sql`limit ${q.limit + 1}` : sql`limit ${q.limit + 1} offset ${q.offset}`;
  const select = spec.columns + keys;
  const pageQuery = () => {
    if (spec.analysis && sortSpec.joined && sortExpr) {
      return analysisSortedPage({
        sql,
        analysis: spec.analysis,
        base: baseTable,
        scope: spec.scope,
        where,
        select,
        sortExpr,
        tiebreak: spec.tiebreak,
        direction,
        want: q.limit + 1,
        offset: q.offset,
        cursor,
        seek: (tiebreak, notNull) => afterCursor(sql, sortExpr, tiebreak, direction, notNull, cursor!),
      });
    }
    return needsJoin || !spec.analysis
      ? sql`select ${sql.unsafe(select)} from ${filtered} and ${seek} order by ${order} ${limit}`
      : sql`select ${sql.unsafe(select)} from (select ${sql.unsafe(`${spec.alias}.*`)} from ${filtered} and ${seek} order by ${order} ${limit}) ${sql.unsafe(spec.alias)} ${join} order by ${order}`;
  };
  const countQuery = () =>
    spec.analysis && countsOnAnalysis(byAnalysis)
      ? serialCount(
          sql,
          (tx) =>
            tx<
              { n: number }[]
            >`select count(*)::int as n from ${sql.unsafe(spec.analysis!.table)} where ${spec.analysis!.scope} and ${where}`,
        )
      : sql<{ n: number }[]>`select count(*)::int as n from ${filtered}`;
  const few =
    spec.analysis && countsOnAnalysis(byAnalysis) && !sortSpec.joined
      ? await cursorQuery(Boolean(cursor), () =>
          fewMatchesPage({
            sql,
            analysis: spec.analysis!,
            base: baseTable,
            scope: spec.scope,
            where,
            seek,
            select,
            order,
            limit,
          }),
        )
      : null;
  const [rows, count] = few
    ? [few.rows, q.skipTotalCount ? null : [{ n: few.total }]]
    : await cursorQuery(Boolean(cursor), () =>
        Promise.all([pageQuery(), q.skipTotalCount ? Promise.resolve(null) : countQuery()]),
      );
  const page = rows.slice(0, q.limit);
  const pagination = paginate(q.limit, offset, page.length, rows.length > q.limit, count ? count[0].n : null);
  const nextCursor =
    pagination.hasMore && sortExpr && page.length > 0
      ? cursorAfter(page[page.length - 1], hash, offset + page.length, 2)
      : null;
  return { rows: page, pagination: { ...pagination, nextCursor } };
}

/**
 * A total counted on an analysis field's index, in one process. The planner turns a count of more
 * than ~130,000 index entries into a parallel index-only scan; on the small machines Cellar is
 * measured on that bought no latency and cost 2.5x the Postgres CPU (bench/e2e.ts at 3 million
 * traces: 65 ms per read against 27 for a serial count of 80% of the entries), the workers
 * started per request and taking turns on the same b-tree pages. Same rows counted either way.
 */
async function serialCount(
  sql: Sql,
  count: (tx: postgres.TransactionSql) => postgres.PendingQuery<{ n: number }[]>,
): Promise<{ n: number }[]> {
  const [, rows] = await sql.begin((tx) => [tx`set local max_parallel_workers_per_gather = 0`, count(tx)]);
  return rows;
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
