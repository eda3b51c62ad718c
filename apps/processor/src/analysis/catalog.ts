import type postgres from "postgres";
import { canonicalJson, sha256Hex } from "../../../../shared/crypto";
import type { SessionRow } from "../maturation/mature";
import { contentText, type TraceInput, type TranscriptItem } from "./transcript";

export interface ToolSchemaSeen {
  name: string;
  schemaHash: string;
  schema: Record<string, unknown>;
  firstSeenAt: string;
  lastSeenAt: string;
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
      seen.set(canonical, { name: def.name, schemaHash: await sha256Hex(canonical), schema: def, firstSeenAt: at, lastSeenAt: at });
    }
  }
  return [...seen.values()].sort((a, b) => a.name.localeCompare(b.name) || a.schemaHash.localeCompare(b.schemaHash));
}

/** Upserts the service's tool schemas (first/last seen widened) and relinks the session to them. */
export async function persistToolSchemas(tx: postgres.TransactionSql, s: SessionRow, schemas: ToolSchemaSeen[], replace: boolean): Promise<void> {
  if (replace) await tx`delete from session_tool_schemas where session_pk = ${s.id}`;
  if (schemas.length === 0) return;
  // Sorted rows: concurrent maturations lock shared schema rows in the same order (no deadlock).
  const rows = schemas.map((x) => ({ name: x.name, schema_hash: x.schemaHash, schema: x.schema, first: x.firstSeenAt, last: x.lastSeenAt }));
  const ids = await tx<{ id: string }[]>`
    insert into tool_schemas (tenant_id, trace_service_id, name, schema_hash, schema, first_seen_at, last_seen_at)
    select ${s.tenant_id}, ${s.trace_service_id}, name, schema_hash, schema, first, last
    from jsonb_to_recordset(${tx.json(rows as any)}::jsonb) as x(name text, schema_hash text, schema jsonb, first timestamptz, last timestamptz)
    order by name, schema_hash
    on conflict (trace_service_id, name, schema_hash) do update set
      first_seen_at = least(tool_schemas.first_seen_at, excluded.first_seen_at), last_seen_at = greatest(tool_schemas.last_seen_at, excluded.last_seen_at)
    returning id`;
  await tx`
    insert into session_tool_schemas (session_pk, tool_schema_id)
    select ${s.id}, unnest(${tx.array(ids.map((r) => r.id))}::uuid[]) on conflict do nothing`;
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

export async function loadIntentDefinitions(tx: postgres.TransactionSql, traceServiceId: string): Promise<IntentDefinition[]> {
  return tx<IntentDefinition[]>`select id, name, description, examples from intent_definitions where trace_service_id = ${traceServiceId} order by name`;
}

export async function persistIntents(tx: postgres.TransactionSql, s: SessionRow, matches: IntentMatch[], replace: boolean): Promise<void> {
  if (replace) await tx`delete from session_intents where session_pk = ${s.id}`;
  if (matches.length === 0) return;
  const rows = matches.map((m) => ({ intent_id: m.intentId, score: m.score, evidence: m.evidence }));
  await tx`
    insert into session_intents (session_pk, intent_id, tenant_id, score, evidence)
    select ${s.id}, intent_id, ${s.tenant_id}, score, evidence
    from jsonb_to_recordset(${tx.json(rows as any)}::jsonb) as x(intent_id uuid, score real, evidence jsonb)
    on conflict do nothing`;
}
