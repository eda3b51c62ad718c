/**
 * Writes sdks/sampling-vectors.json: ids of several schemes with their FNV-1a, their sampling hash
 * and whether each rate keeps them. Every SDK's tests check the file, so an SDK in another
 * language matches by passing it. `bun run sdks/typescript/scripts/sampling-vectors.ts` rewrites it
 * (only when the rule changes on purpose: the kept set of every user changes with it).
 */
import { join } from "node:path";
import { fnv1a32, sampleHash, sessionSampled } from "../src/sampling.ts";

export const VECTOR_RATES = [0.01, 0.1, 0.25, 0.5, 0.9];
export const VECTORS_PATH = join(import.meta.dir, "..", "..", "sampling-vectors.json");

export function vectorIds(): string[] {
  const ids = ["", "a", "foobar", "hello-1", "é-ü", "会话-42", "🍷 cellar", "x".repeat(300)];
  for (let i = 0; i < 40; i++) ids.push(`conv-${i}`);
  for (let i = 0; i < 10; i++) ids.push(`user-${i}@example.com`);
  for (let i = 0; i < 10; i++) ids.push(new Date(Date.UTC(2026, 0, 1, 0, 0, i)).toISOString());
  for (let i = 0; i < 10; i++) ids.push(`00000000-0000-4000-8000-${String(i).padStart(12, "0")}`);
  for (let i = 0; i < 10; i++) ids.push(String(1_700_000_000_000 + i));
  return ids;
}

export function vectors() {
  return vectorIds().map((id) => ({
    id,
    fnv1a32: fnv1a32(id),
    hash: sampleHash(id),
    kept: Object.fromEntries(VECTOR_RATES.map((r) => [String(r), sessionSampled(id, r)])),
  }));
}

if (import.meta.main) {
  const rule = "kept when hash / 2**32 < rate; hash = fmix32(fnv1a32(utf8(id))) (docs/sdks.md, Sampling)";
  const rows = vectors().map((v) => `  ${JSON.stringify(v)}`);
  const text = `{\n "rule": ${JSON.stringify(rule)},\n "rates": ${JSON.stringify(VECTOR_RATES)},\n "vectors": [\n${rows.join(",\n")}\n ]\n}\n`;
  await Bun.write(VECTORS_PATH, text);
  console.log(`wrote ${rows.length} vectors to ${VECTORS_PATH}`);
}
