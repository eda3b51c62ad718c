import { t } from "elysia";
import { ACCEPTED_REASONS, REFUSAL_REASONS, SDK_DROP_REASONS } from "@cellar/shared/ledger/model";
import { Iso, Nullable } from "../http/schemas.ts";

/** The ledger's windows: length and point width (per minute for the last hour, else per hour). */
export const LEDGER_WINDOWS = {
  "1h": { seconds: 3600, stepSeconds: 60 },
  "24h": { seconds: 86_400, stepSeconds: 3600 },
  "7d": { seconds: 7 * 86_400, stepSeconds: 3600 },
} as const;
export type LedgerWindow = keyof typeof LEDGER_WINDOWS;

export const LedgerQuery = t.Object({
  window: t.Optional(
    t.Union([t.Literal("1h"), t.Literal("24h"), t.Literal("7d")], {
      default: "24h",
      error: "invalid window: must be one of 1h, 24h, 7d",
    }),
  ),
});

const counts = (keys: readonly string[], description: string) =>
  t.Object(Object.fromEntries(keys.map((k) => [k, t.Integer()])), { description });

/** One point (or the window's totals): every stage's count of items. */
export const LedgerFigures = t.Object({
  sdkRequested: t.Integer({ description: "Items the SDKs were asked to send (their reports)" }),
  sdkDropped: counts(SDK_DROP_REASONS, "Items the SDKs dropped, by reason"),
  accepted: counts(
    ACCEPTED_REASONS,
    "Items ingest stored in INGEST, by door (`unrecorded`: by an ingest that did not count them, counted when the processor settled them)",
  ),
  refused: counts(
    REFUSAL_REASONS,
    "Items ingest refused, by reason (a request refused whole before its body was read counts once)",
  ),
  stored: t.Integer({ description: "Items the processor wrote to Postgres" }),
  deadLettered: t.Integer(),
  replayed: t.Integer({ description: "Dead letters replayed and settled again" }),
  inFlight: t.Integer({
    description: "accepted - stored - deadLettered + replayed: still on the way (or, once settled, unaccounted for)",
  }),
  loss: t.Integer({ description: "Dropped by the SDKs + refused + dead-lettered - replayed" }),
});

export const Ledger = t.Object({
  window: t.String(),
  from: Iso,
  to: Iso,
  stepSeconds: t.Integer(),
  service: Nullable(t.String({ description: "The service, or null for every service you can see" })),
  totals: LedgerFigures,
  series: t.Array(t.Intersect([t.Object({ t: Iso }), LedgerFigures])),
  reconciliation: Nullable(
    t.Object({
      checkedAt: Iso,
      balanced: t.Boolean(),
      unbalancedSince: Nullable(Iso),
      from: Iso,
      to: Iso,
      problems: t.Array(t.String()),
    }),
  ),
});
