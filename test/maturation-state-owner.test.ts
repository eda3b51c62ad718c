import { expect, test } from "bun:test";
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join, relative, resolve } from "node:path";

/**
 * shared/maturation/state.ts is the one writer of sessions' and traces' maturation state
 * (docs/maturation.md): no other source file may write those columns or a trace's pending row
 * (migration 0016), remove those rows, or spell out what "parked" means. A grep over the code, not a runtime check: it fails the moment
 * such SQL appears anywhere else.
 */
const ROOT = resolve(import.meta.dir, "..");
const OWNER = "shared/maturation/state.ts";
const STATE_COLUMNS =
  "status|maturation_count|matured_at|published_count|maturation_failures|maturation_retry_at|maturation_failed_at|maturation_error";
const STATE_KEYS =
  "status|maturationCount|maturedAt|publishedCount|maturationFailures|maturationRetryAt|maturationFailedAt|maturationError";

const RULES: Array<{ what: string; pattern: RegExp }> = [
  {
    what: "SQL update of a maturation state column",
    // `update sessions|traces ... set ... <column> =` within one statement (no backtick between).
    pattern: new RegExp(`update\\s+(sessions|traces)\\b[^\`]*?\\bset\\b[^\`]*?\\b(${STATE_COLUMNS})\\s*=`, "i"),
  },
  {
    what: "drizzle update of a maturation state column",
    pattern: new RegExp(`\\.update\\(\\s*(sessions|traces)\\s*\\)[\\s\\S]{0,300}?\\b(${STATE_KEYS})\\s*:`),
  },
  { what: "SQL delete of sessions or traces", pattern: /delete\s+from\s+(sessions|traces)\b/i },
  {
    // A trace's state (migration 0016): its pending row, inserted, matured, deleted only there.
    what: "SQL write of a trace's pending row",
    pattern: /(insert\s+into|update|delete\s+from)\s+pending_traces\b/i,
  },
  { what: "drizzle write of a trace's pending row", pattern: /\.(insert|update|delete)\(\s*pendingTraces\s*\)/ },

  { what: "drizzle delete of sessions or traces", pattern: /\.delete\(\s*(sessions|traces)\s*\)/ },
  {
    what: 'the "parked" predicate spelled out',
    pattern:
      /maturation_?failed_?at\}?\s+is\s+not\s+null\s+and|last_?ingested_?at\}?\s*<=\s*\$?\{?\w*\.?maturation_?failed_?at/i,
  },
];

function sourceFiles(dir: string): string[] {
  const out: string[] = [];
  for (const name of readdirSync(dir)) {
    if (name === "node_modules" || name.startsWith(".")) continue;
    const path = join(dir, name);
    if (statSync(path).isDirectory()) out.push(...sourceFiles(path));
    else if (/\.(ts|tsx)$/.test(name) && !/\.test\.tsx?$/.test(name)) out.push(path);
  }
  return out;
}

function offences(file: string): string[] {
  const text = readFileSync(file, "utf8");
  return RULES.filter((r) => r.pattern.test(text)).map((r) => r.what);
}

test("only shared/maturation/state.ts writes maturation state or spells out 'parked'", () => {
  const found: string[] = [];
  for (const top of ["apps", "shared", "scripts", "web/src"]) {
    let files: string[] = [];
    try {
      files = sourceFiles(join(ROOT, top));
    } catch {
      continue;
    }
    for (const file of files) {
      const rel = relative(ROOT, file);
      if (rel === OWNER) continue;
      for (const what of offences(file)) found.push(`${rel}: ${what}`);
    }
  }
  expect(found).toEqual([]);
});

test("the rules find what they look for (the owner module trips every one but the drizzle ones)", () => {
  const hits = offences(join(ROOT, OWNER));
  expect(hits).toContain("SQL update of a maturation state column");
  expect(hits).toContain("SQL delete of sessions or traces");
  expect(hits).toContain('the "parked" predicate spelled out');
  expect(hits).toContain("SQL write of a trace's pending row");
  // The drizzle spellings, and the old inline forms, as they were before the module existed.
  const before = [
    "await db.update(sessions).set({ maturationFailures: 0, maturationRetryAt: null })",
    "sql`${sessions.maturationFailedAt} is not null and ${sessions.lastIngestedAt} <= ${sessions.maturationFailedAt}`",
    "(s.maturation_failed_at is not null and s.last_ingested_at <= s.maturation_failed_at) as failed",
    "update traces set status = 'matured', maturation_count = 1 where id = any($1)",
    "await db.delete(sessions).where(eq(sessions.id, id))",
    "delete from pending_traces p using locked where p.trace_pk = locked.trace_pk",
    "await db.update(pendingTraces).set({ maturedAt: new Date() })",
    "update traces set published_count = 1 where id in (select id from locked)",
  ];
  for (const snippet of before) expect(RULES.some((r) => r.pattern.test(snippet))).toBe(true);
});
