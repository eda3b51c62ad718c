import type postgres from "postgres";
import type { Fragment } from "./db.ts";
import { badRequest } from "@cellar/shared/errors";

/**
 * The typed representation of a search: fields (FilterSet), filters, a sort and a page
 * (PagedQuery), compiled to SQL here and only here. The HTTP binding of the same things (the
 * request schemas) is http/filters.ts; running a search is ./paged.ts.
 */

type Sql = postgres.Sql;

/** One filter of a search body (validated by http/filters.ts's FilterItem schema). */
export type FilterItem = { field: string; operator: string; value: unknown };

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

export const dynamicsOf = (set: FilterSet): DynamicField[] =>
  set.dynamic === undefined ? [] : Array.isArray(set.dynamic) ? set.dynamic : [set.dynamic];

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

export function resolveField(set: FilterSet, field: string, at: string): FieldSpec {
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

export const exprOf = (sql: Sql, spec: FieldSpec): Fragment =>
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
export function sortableField(set: FilterSet, field: string): FieldSpec | undefined {
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
