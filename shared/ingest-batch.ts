import { ingestMessageProblem, ingestMessageShapeProblem } from "./ingest-rules.ts";
import { IngestBatchMessage, type IngestBatchItem, type IngestMessage, type IngestStreamMessage } from "./payloads.ts";
import { parseInstant } from "./timestamps.ts";
import { compileValidator } from "./validation.ts";

/**
 * INGEST's batch messages (issue 36, docs/analyse-once.md "One INGEST message per request"): the
 * items of one request in one message. Each item stands for the IngestMessage it expands to: it
 * is checked, written and, when it fails, dead-lettered as that message, so the processor's
 * writer, the dead letters and their replay know one shape of item, the one every message had
 * before batches (and still has from the single doors).
 */
const batchValidator = compileValidator(IngestBatchMessage);

export const isBatch = (m: unknown): m is IngestBatchMessage =>
  m !== null && typeof m === "object" && (m as { kind?: unknown }).kind === "batch";

/** The IngestMessage an item of a batch stands for (the batch's tenant and receivedAt are its own). */
export function expandItem(batch: IngestBatchMessage, item: IngestBatchItem): IngestMessage {
  return {
    kind: item.kind,
    messageId: item.messageId,
    tenantId: batch.tenantId,
    serviceName: item.serviceName,
    receivedAt: batch.receivedAt,
    payload: item.payload,
  } as IngestMessage;
}

/** Every message of the INGEST stream as the IngestMessages it carries (a batch's rejected items left out). */
export function itemsOf(m: IngestStreamMessage): IngestMessage[] {
  if (!isBatch(m)) return [m];
  const rejected = new Set(m.rejected?.map((r) => r.index));
  return m.items.flatMap((item, i) => (rejected.has(i) ? [] : [expandItem(m, item)]));
}

/**
 * The INGEST codec's check of a batch: its envelope (a broken one refuses the whole message:
 * it is dead-lettered at once), then each item by its kind's rules, as the IngestMessage it
 * expands to: the shape rules when ingest marked the message checked, else every rule. Items
 * that fail are listed in `rejected` (the processor dead-letters each alone); the others are
 * normalised in place.
 */
export function ingestBatchProblem(message: IngestBatchMessage, checked: boolean): string | null {
  const problem = batchValidator.firstError(message);
  if (problem) return problem;
  const received = parseInstant(message.receivedAt);
  if (!received.ok) return `invalid receivedAt: ${received.reason}`;
  message.receivedAt = received.iso;
  const rejected: Array<{ index: number; error: string }> = [];
  for (let i = 0; i < message.items.length; i++) {
    const expanded = expandItem(message, message.items[i]);
    const error = checked ? ingestMessageShapeProblem(expanded) : ingestMessageProblem(expanded);
    if (error) rejected.push({ index: i, error: `invalid items[${i}]: ${error}` });
  }
  if (rejected.length) message.rejected = rejected;
  return null;
}
