import { expect, test } from "bun:test";
import { useTestDatabase } from "./helpers/test-database";

/**
 * Ready for a Postgres distributed by tenant (Citus, docs/scaling.md "Sharding by tenant"), read
 * from the catalog of a migrated database. A table sharded by tenant_id can only enforce a
 * primary or unique key that includes tenant_id, and a foreign key to another sharded table only
 * when both sides name tenant_id; a reference table (a full copy on every node) may only point
 * at other reference tables. Every table is distributed by tenant but these, deployment-wide by
 * nature: each is read before any tenant is known.
 */
const REFERENCE_TABLES: Record<string, string> = {
  tenants: "the tenants themselves: every distributed table's tenant_id points here",
  setup_tokens: "first run: the setup token exists before any tenant does",
  users: "sign-in finds the account by e-mail across tenants; api_keys, dashboard_sessions and invitations point here",
  api_keys: "every request's key is found by its hash before its tenant is known",
  dashboard_sessions: "a dashboard request's Bearer token is found by its hash before its tenant is known",
  invitations: "an invitation link's token is found by its hash before its tenant is known",
};

const db = useTestDatabase();

test("every primary and unique key includes tenant_id, but on the reference tables", async () => {
  const rows = await db.database.sql<{ tbl: string; key: string }[]>`
    select c.relname as tbl, i.relname as key
    from pg_index ix
      join pg_class c on c.oid = ix.indrelid
      join pg_class i on i.oid = ix.indexrelid
      join pg_namespace n on n.oid = c.relnamespace
    where n.nspname = 'public' and (ix.indisprimary or ix.indisunique)
      and not exists (
        select 1 from unnest(ix.indkey) k join pg_attribute a on a.attrelid = c.oid and a.attnum = k where a.attname = 'tenant_id')
      and c.relname not like '\\_\\_drizzle%'
    order by 1, 2`;
  expect(rows.filter((r) => !(r.tbl in REFERENCE_TABLES)).map((r) => `${r.tbl}.${r.key}`)).toEqual([]);
  // The list only names tables that need it: each one has a key without tenant_id.
  expect([...new Set(rows.map((r) => r.tbl))].sort()).toEqual(Object.keys(REFERENCE_TABLES).sort());
});

test("every distributed table has tenant_id, and its foreign keys can be enforced on a shard", async () => {
  const tables = await db.database.sql<{ tbl: string; has_tenant: boolean }[]>`
    select c.relname as tbl,
      exists (select 1 from pg_attribute a where a.attrelid = c.oid and a.attname = 'tenant_id' and not a.attisdropped and a.attnotnull) as has_tenant
    from pg_class c join pg_namespace n on n.oid = c.relnamespace
    where n.nspname = 'public' and c.relkind = 'r' and c.relname not like '\\_\\_drizzle%'
    order by 1`;
  for (const name of Object.keys(REFERENCE_TABLES)) expect(tables.map((t) => t.tbl)).toContain(name);
  expect(tables.filter((t) => !(t.tbl in REFERENCE_TABLES) && !t.has_tenant).map((t) => t.tbl)).toEqual([]);

  const fks = await db.database.sql<{ name: string; child: string; parent: string; pairs: string[] }[]>`
    select con.conname as name, c.relname as child, p.relname as parent,
      array(select ca.attname || '=' || pa.attname
            from unnest(con.conkey, con.confkey) as k(ck, pk)
              join pg_attribute ca on ca.attrelid = con.conrelid and ca.attnum = k.ck
              join pg_attribute pa on pa.attrelid = con.confrelid and pa.attnum = k.pk) as pairs
    from pg_constraint con
      join pg_class c on c.oid = con.conrelid
      join pg_class p on p.oid = con.confrelid
      join pg_namespace n on n.oid = c.relnamespace
    where n.nspname = 'public' and con.contype = 'f'
    order by 1`;
  expect(fks.length).toBeGreaterThan(30);
  const unenforceable = fks.flatMap((fk) => {
    const childIsReference = fk.child in REFERENCE_TABLES;
    const parentIsReference = fk.parent in REFERENCE_TABLES;
    // Reference -> reference and distributed -> reference are local on every node.
    if (parentIsReference) return [];
    if (childIsReference) return [`${fk.name}: reference table ${fk.child} -> distributed ${fk.parent}`];
    // Distributed -> distributed: the shard holding the child row must hold the parent row.
    return fk.pairs.includes("tenant_id=tenant_id") ? [] : [`${fk.name}: ${fk.pairs.join(", ")}`];
  });
  expect(unenforceable).toEqual([]);
});
