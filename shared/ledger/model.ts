import { Type, type Static } from "@sinclair/typebox";
import { IDENTIFIER_PATTERN, LIMITS } from "../payloads.ts";
import { compileValidator } from "../validation.ts";

/**
 * The ledger's stages (docs/ledger.md). Every count is of items (a trace, an event, a score: one
 * INGEST message each), except a request ingest refused whole before reading it, which counts once.
 */
export const LEDGER_STAGES = [
  "sdk_requested",
  "sdk_dropped",
  "accepted",
  "refused",
  "stored",
  "dead_lettered",
  "replayed",
] as const;
export type LedgerStage = (typeof LEDGER_STAGES)[number];

/** Why an SDK dropped items: the reasons an SDK reports, each apart. */
export const SDK_DROP_REASONS = ["queue_full", "retries_exhausted", "refused", "sampled_out"] as const;
/** The ingest doors: `accepted` is counted per door (grpc: the OTLP/gRPC listener). */
export const INGEST_DOORS = ["raw", "batch", "scores", "otlp", "grpc"] as const;
export type IngestDoor = (typeof INGEST_DOORS)[number];
/**
 * `accepted`'s reason for an item no ingest counted: its INGEST message carries no door (an ingest
 * of a release before the ledger, during an online upgrade, or another publisher). The processor
 * counts it when it stores or dead-letters the item (docs/ledger.md, "Rows the ledger never saw").
 */
export const UNRECORDED_DOOR = "unrecorded";
/** `accepted`'s reasons: the doors, and `unrecorded`. */
export const ACCEPTED_REASONS = [...INGEST_DOORS, UNRECORDED_DOOR] as const;
/** Why ingest refused (from the answer's status; `invalid` also for one item of a batch or OTLP request). */
export const REFUSAL_REASONS = ["invalid", "forbidden", "too_large", "rate_limited", "unavailable", "other"] as const;
export type RefusalReason = (typeof REFUSAL_REASONS)[number];

export function refusalReasonFor(status: number): RefusalReason {
  if (status === 400 || status === 415 || status === 422) return "invalid";
  if (status === 403) return "forbidden";
  if (status === 413) return "too_large";
  if (status === 429) return "rate_limited";
  if (status === 503) return "unavailable";
  return "other";
}

const Count = Type.Integer({ minimum: 0, maximum: Number.MAX_SAFE_INTEGER });

/**
 * What an SDK adds to a /raw/batch envelope as `ledger` (docs/sdks.md, "The ledger"): its
 * instance's cumulative counters since it started, and a sequence that grows with every report.
 * Counts only, bounded size; a retried batch carries the same figures, so it adds nothing.
 */
export const LedgerReport = Type.Object(
  {
    instance: Type.String({ minLength: 8, maxLength: 64, pattern: "^[A-Za-z0-9._:-]+$" }),
    seq: Count,
    service_name: Type.Optional(
      Type.String({ minLength: 1, maxLength: LIMITS.serviceName, pattern: IDENTIFIER_PATTERN }),
    ),
    counts: Type.Object(
      {
        requested: Count,
        queue_full: Count,
        retries_exhausted: Count,
        refused: Count,
        sampled_out: Count,
      },
      { additionalProperties: false },
    ),
  },
  { additionalProperties: false },
);
export type LedgerReport = Static<typeof LedgerReport>;
export const SDK_COUNTERS = ["requested", ...SDK_DROP_REASONS] as const;

const reportValidator = compileValidator(LedgerReport);
/** The report when it is one, else null: a malformed report is ignored, never the batch refused. */
export function readLedgerReport(value: unknown): LedgerReport | null {
  return value !== undefined && reportValidator.check(value) ? (value as LedgerReport) : null;
}

/** The minute an instant falls in, as epoch milliseconds. */
export const minuteOf = (ms: number) => Math.floor(ms / 60_000) * 60_000;
