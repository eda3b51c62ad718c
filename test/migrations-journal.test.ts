// The migration journal as drizzle's migrator reads it: it applies only the migrations whose
// `when` is later than the newest one a database has applied. Migrations written on parallel
// branches and merged out of order would be skipped for good on a database that already ran a
// later one, so the journal must list every migration file once, numbered as its file, with
// `when` rising with the number.
import { expect, test } from "bun:test";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { MIGRATIONS_DIR } from "@cellar/shared/db/client";

test("every migration file is in the journal once, in number order, with `when` rising", () => {
  const journal = JSON.parse(readFileSync(join(MIGRATIONS_DIR, "meta/_journal.json"), "utf8")) as {
    entries: Array<{ idx: number; when: number; tag: string }>;
  };
  const files = readdirSync(MIGRATIONS_DIR)
    .filter((f) => f.endsWith(".sql"))
    .map((f) => f.replace(/\.sql$/, ""))
    .sort();
  expect(journal.entries.map((e) => e.tag)).toEqual(files);
  for (const e of journal.entries) expect(e.idx).toBe(Number(e.tag.slice(0, 4)));
  const whens = journal.entries.map((e) => e.when);
  expect(whens).toEqual([...whens].sort((a, b) => a - b));
  expect(new Set(whens).size).toBe(whens.length);
});
