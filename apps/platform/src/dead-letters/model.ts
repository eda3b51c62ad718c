import { t } from "elysia";
import { Iso, Nullable } from "../http/schemas.ts";
import { DEAD_LETTER_LIMITS } from "./service.ts";

/** The dead-letter view's answers. */

export const DeadLetterItem = t.Object({
  seq: t.Integer({ description: "Its sequence in DEAD_LETTERS: what replay takes" }),
  at: Iso,
  reason: t.String(),
  deliveries: t.Integer(),
  kind: Nullable(t.String({ description: "trace or event" })),
  serviceName: Nullable(t.String()),
  sessionId: Nullable(t.String()),
});
export const DeadLetterList = t.Object({
  count: t.Integer({ description: "The tenant's ingest dead letters found" }),
  truncated: t.Boolean({ description: `True when the scan stopped after ${DEAD_LETTER_LIMITS.SCANNED} stored ones` }),
  data: t.Array(DeadLetterItem, { description: `The oldest ${DEAD_LETTER_LIMITS.LISTED}` }),
});
export const ReplayResult = t.Object({
  replayed: t.Integer(),
  more: t.Boolean({ description: "Some remain: call again" }),
  results: t.Array(t.Object({ seq: t.Integer(), status: t.Union([t.Literal("replayed"), t.Literal("missing")]) })),
});
