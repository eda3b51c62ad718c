import type postgres from "postgres";
import { canonicalJson, sha256Hex } from "@cellar/shared/crypto";
import type { SessionRow } from "../maturation/mature";
import { contentText, type TraceInput, type TranscriptItem } from "./transcript";

export interface ToolSchemaSeen {
  name: string;
  schemaHash: string;
  schema: Record<string, unknown>;
  firstSeenAt: string;
  lastSeenAt: string;
}

/** The same few schemas come with every call of a service: remember their hashes (bounded). */
const hashCache = new Map<string, string>();
async function schemaHash(canonical: string): Promise<string> {
  const hit = hashCache.get(canonical);
  if (hit) return hit;
  const hash = await sha256Hex(canonical);
  if (hashCache.size >= 5_000) hashCache.delete(hashCache.keys().next().value!);
  hashCache.set(canonical, hash);
  return hash;
}

/** Function definitions from `request.tools[].function` and legacy `request.functions`, deduplicated. */
export async function extractToolSchemas(traces: TraceInput[]): Promise<ToolSchemaSeen[]> {
  const seen = new Map<string, ToolSchemaSeen>();
  for (const t of traces) {
    const req = t.payload.request ?? {};
    const defs: any[] = [
      ...(Array.isArray(req.tools) ? req.tools.map((tool: any) => (tool?.type === "function" || tool?.function ? tool.function : null)) : []),
      ...(Array.isArray(req.functions) ? req.functions : []),
    ].filter((d) => d && typeof d === "object" && typeof d.name === "string" && d.name);
    for (const def of defs) {
      const canonical = canonicalJson(def);
      const at = t.startTime.toISOString();
      const prior = seen.get(canonical);
      if (prior) {
        if (at < prior.firstSeenAt) prior.firstSeenAt = at;
        if (at > prior.lastSeenAt) prior.lastSeenAt = at;
        continue;
      }
      seen.set(canonical, { name: def.name, schemaHash: await schemaHash(canonical), schema: def, firstSeenAt: at, lastSeenAt: at });
    }
  }
  return [...seen.values()].sort((a, b) => a.name.localeCompare(b.name) || a.schemaHash.localeCompare(b.schemaHash));
}

/**
 * Upserts the tool schemas of a batch of sessions (first/last seen widened) and relinks each
 * session to what it used. Rows go in sorted, so concurrent maturations lock shared schema rows
 * in the same order (no deadlock).
 */
export async function persistToolSchemas(tx: postgres.TransactionSql, list: Array<{ row: SessionRow; schemas: ToolSchemaSeen[]; replace: boolean }>): Promise<void> {
  const replaced = list.filter((x) => x.replace).map((x) => x.row.id);
  if (replaced.length) await tx`delete from session_tool_schemas where session_pk = any(${tx.array(replaced)}::uuid[])`;
  const merged = new Map<string, { tenant_id: string; trace_service_id: string; name: string; schema_hash: string; schema: unknown; first: string; last: string }>();
  for (const { row, schemas } of list) {
    for (const x of schemas) {
      const key = `${row.trace_service_id}\u0000${x.name}\u0000${x.schemaHash}`;
      const m = merged.get(key);
      if (!m) merged.set(key, { tenant_id: row.tenant_id, trace_service_id: row.trace_service_id, name: x.name, schema_hash: x.schemaHash, schema: x.schema, first: x.firstSeenAt, last: x.lastSeenAt });
      else {
        if (x.firstSeenAt < m.first) m.first = x.firstSeenAt;
        if (x.lastSeenAt > m.last) m.last = x.lastSeenAt;
      }
    }
  }
  if (merged.size === 0) return;
  // Every maturation of a service sees the same few schemas: an upsert would lock the same rows
  // in every concurrent transaction and serialize them. Insert what is new, read the ids, and
  // widen first/last seen only when they move by more than a minute (rows a WHERE skips stay unlocked).
  const rows = [...merged.values()].sort((a, b) => a.trace_service_id.localeCompare(b.trace_service_id) || a.name.localeCompare(b.name) || a.schema_hash.localeCompare(b.schema_hash));
  await tx`
    insert into tool_schemas (tenant_id, trace_service_id, name, schema_hash, schema, first_seen_at, last_seen_at)
    select tenant_id, trace_service_id, name, schema_hash, schema, first, last
    from jsonb_to_recordset(${tx.json(rows as any)}::jsonb) as x(tenant_id uuid, trace_service_id uuid, name text, schema_hash text, schema jsonb, first timestamptz, last timestamptz)
    order by trace_service_id, name, schema_hash
    on conflict (trace_service_id, name, schema_hash) do nothing`;
  const keys = rows.map((r) => ({ trace_service_id: r.trace_service_id, name: r.name, schema_hash: r.schema_hash, first: r.first, last: r.last }));
  const saved = await tx<{ id: string; trace_service_id: string; name: string; schema_hash: string; stale: boolean }[]>`
    select t.id, t.trace_service_id, t.name, t.schema_hash,
      (t.last_seen_at < x.last - interval '1 minute' or t.first_seen_at > x.first + interval '1 minute') as stale
    from tool_schemas t join jsonb_to_recordset(${tx.json(keys as any)}::jsonb) as x(trace_service_id uuid, name text, schema_hash text, first timestamptz, last timestamptz)
      on t.trace_service_id = x.trace_service_id and t.name = x.name and t.schema_hash = x.schema_hash`;
  const stale = saved.filter((r) => r.stale).map((r) => r.id).sort();
  if (stale.length) {
    await tx`
      with x as (select * from jsonb_to_recordset(${tx.json(keys as any)}::jsonb) as x(trace_service_id uuid, name text, schema_hash text, first timestamptz, last timestamptz)),
        locked as (select id from tool_schemas where id = any(${tx.array(stale)}::uuid[]) order by id for update)
      update tool_schemas t set first_seen_at = least(t.first_seen_at, x.first), last_seen_at = greatest(t.last_seen_at, x.last)
      from x where t.id in (select id from locked) and t.trace_service_id = x.trace_service_id and t.name = x.name and t.schema_hash = x.schema_hash`;
  }
  const idOf = new Map(saved.map((r) => [`${r.trace_service_id}\u0000${r.name}\u0000${r.schema_hash}`, r.id]));
  const links = list.flatMap(({ row, schemas }) => schemas.map((x) => ({ session_pk: row.id, tool_schema_id: idOf.get(`${row.trace_service_id}\u0000${x.name}\u0000${x.schemaHash}`) })));
  if (links.length) {
    await tx`
      insert into session_tool_schemas (session_pk, tool_schema_id)
      select session_pk, tool_schema_id from jsonb_to_recordset(${tx.json(links as any)}::jsonb) as x(session_pk uuid, tool_schema_id uuid)
      on conflict do nothing`;
  }
}

export interface IntentDefinition {
  id: string;
  name: string;
  description: string;
  examples: string[];
}
export interface IntentMatch {
  intentId: string;
  name: string;
  score: number;
  evidence: { itemId: string; text: string; matched: string };
}

/** Minimum share of a phrase's words found in one user message for a match. */
export const INTENT_MATCH_THRESHOLD = 0.6;
const STOPWORDS = new Set("a an the i me my we our you your it its is are was were be been to of in on at for from by with and or but not no do does did can could would should will shall may might this that these those there here please hi hello hey thanks thank just so".split(" "));

export function intentTokens(text: string): Set<string> {
  const words = text.toLowerCase().normalize("NFKD").replace(/[\u0300-\u036f]/g, "").split(/[^\p{L}\p{N}]+/u);
  return new Set(words.filter((w) => w.length > 1 && !STOPWORDS.has(w)).map((w) => (w.length > 3 && w.endsWith("s") && !w.endsWith("ss") ? w.slice(0, -1) : w)));
}

/**
 * Matches user messages against intent phrases: each example phrase (or, without examples, the
 * name and the description) scores the share of its words present in one user message; the
 * best score per intent counts, and a score >= INTENT_MATCH_THRESHOLD is a match.
 */
export function matchIntents(items: TranscriptItem[], intents: IntentDefinition[]): IntentMatch[] {
  const messages = items.filter((i) => i.type === "user").map((i) => ({ id: i.id, text: contentText(i.content), tokens: intentTokens(contentText(i.content)) }));
  const out: IntentMatch[] = [];
  for (const intent of intents) {
    const phrases = intent.examples.length ? intent.examples : [intent.name.replace(/[_-]+/g, " "), intent.description].filter(Boolean);
    let best: IntentMatch | null = null;
    for (const phrase of phrases) {
      const want = intentTokens(phrase);
      if (want.size === 0) continue;
      for (const m of messages) {
        let hit = 0;
        for (const w of want) if (m.tokens.has(w)) hit++;
        const score = Math.round((hit / want.size) * 1000) / 1000;
        if (score >= INTENT_MATCH_THRESHOLD && (!best || score > best.score)) {
          best = { intentId: intent.id, name: intent.name, score, evidence: { itemId: m.id, text: m.text.slice(0, 200), matched: phrase } };
        }
      }
    }
    if (best) out.push(best);
  }
  return out.sort((a, b) => b.score - a.score || a.name.localeCompare(b.name));
}

/** Intent definitions of several services, by service id. */
export async function loadIntentDefinitions(tx: postgres.TransactionSql, traceServiceIds: string[]): Promise<Map<string, IntentDefinition[]>> {
  const rows = await tx<(IntentDefinition & { trace_service_id: string })[]>`
    select id, trace_service_id, name, description, examples from intent_definitions
    where trace_service_id = any(${tx.array(traceServiceIds)}::uuid[]) order by name`;
  const out = new Map<string, IntentDefinition[]>();
  for (const r of rows) out.set(r.trace_service_id, [...(out.get(r.trace_service_id) ?? []), r]);
  return out;
}

export async function persistIntents(tx: postgres.TransactionSql, list: Array<{ row: SessionRow; matches: IntentMatch[]; replace: boolean }>): Promise<void> {
  const replaced = list.filter((x) => x.replace).map((x) => x.row.id);
  if (replaced.length) await tx`delete from session_intents where session_pk = any(${tx.array(replaced)}::uuid[])`;
  const rows = list.flatMap(({ row, matches }) => matches.map((m) => ({ session_pk: row.id, tenant_id: row.tenant_id, intent_id: m.intentId, score: m.score, evidence: m.evidence })));
  if (rows.length === 0) return;
  await tx`
    insert into session_intents (session_pk, intent_id, tenant_id, score, evidence)
    select session_pk, intent_id, tenant_id, score, evidence
    from jsonb_to_recordset(${tx.json(rows as any)}::jsonb) as x(session_pk uuid, intent_id uuid, tenant_id uuid, score real, evidence jsonb)
    on conflict do nothing`;
}
