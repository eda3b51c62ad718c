import type { ComponentChildren } from "preact";
import { num, usd } from "../format";
import { type Column, DataTable } from "./DataTable";
import { Panel } from "./Panel";

/**
 * A cost broken down call by call and line by line (docs/pricing.md, "Cost breakdown"), as the
 * trace read (`cost.calls`) and the session's `S/cost-breakdown` (`traces[].cost.calls`) carry it.
 * The total shown is the sum of the lines shown, never a figure from elsewhere.
 */
export interface CostLine {
  kind: string;
  tokens: number;
  usdPerMillion: number;
  usd: number;
  tier: string | null;
}
export interface CallCost {
  index: number;
  model: string | null;
  costUsd: number | null;
  reason: string | null;
  entry: { id: string; source: string; url: string | null; date: string } | null;
  serviceTier: string | null;
  lines: CostLine[];
}
export interface BreakdownCall {
  key: string;
  /** What the call is called ("Call 2"), for its heading and its table's name. */
  name: string;
  /** Shown instead of the name in the heading (a link to the call's trace). */
  label?: ComponentChildren;
  call: CallCost;
}

/** As the server rounds a line (1e-10 USD), so sums read the same on both sides. */
const round = (v: number) => Math.round(v * 1e10) / 1e10;

export interface CostTotals {
  /** The sum of every line; null when a call is unpriced. */
  totalUsd: number | null;
  /** The sum of the priced calls' lines. */
  pricedUsd: number;
  lineCount: number;
  unpricedCalls: number;
  /** Tokens and cost per token kind, in first-seen order. */
  byKind: Array<{ kind: string; tokens: number; usd: number }>;
}

export function costTotals(calls: CallCost[]): CostTotals {
  const kinds = new Map<string, { kind: string; tokens: number; usd: number }>();
  let priced = 0;
  let lineCount = 0;
  let unpricedCalls = 0;
  for (const c of calls) {
    if (c.costUsd === null) unpricedCalls++;
    for (const l of c.lines) {
      lineCount++;
      const k = kinds.get(l.kind) ?? { kind: l.kind, tokens: 0, usd: 0 };
      k.tokens += l.tokens;
      k.usd += l.usd;
      kinds.set(l.kind, k);
      if (c.costUsd !== null) priced += l.usd;
    }
  }
  const byKind = [...kinds.values()].map((k) => ({ ...k, usd: round(k.usd) }));
  const pricedUsd = round(priced);
  return { totalUsd: unpricedCalls ? null : pricedUsd, pricedUsd, lineCount, unpricedCalls, byKind };
}

const plural = (n: number, what: string) => `${num(n)} ${what}${n === 1 ? "" : "s"}`;
const kindName = (kind: string) => kind.replace(/_/g, " ").replace(/\b1h\b/, "1 h");
const KIND: Column<{ kind: string }> = { key: "Tokens of", header: "Tokens of", cell: (l) => kindName(l.kind) };
const TOKENS: Column<{ tokens: number }> = {
  key: "Tokens",
  header: "Tokens",
  numeric: true,
  cell: (l) => num(l.tokens),
};
const COST: Column<{ usd: number }> = { key: "Cost", header: "Cost", numeric: true, cell: (l) => usd(l.usd) };
const LINE_COLUMNS: Column<CostLine>[] = [
  KIND,
  TOKENS,
  { key: "USD / 1M", header: "USD / 1M", numeric: true, cell: (l) => `$${l.usdPerMillion}` },
  { key: "Tier", header: "Tier", cell: (l) => l.tier ?? "base" },
  COST,
];
const KIND_COLUMNS: Column<{ kind: string; tokens: number; usd: number }>[] = [KIND, TOKENS, COST];

function Call({ item, open }: { item: BreakdownCall; open: boolean }) {
  const c = item.call;
  return (
    <details class="cost-call" open={open}>
      <summary>
        {item.label ?? item.name}: {c.model ?? "no model"} · {c.costUsd === null ? "unpriced" : usd(c.costUsd)}
      </summary>
      <p class="muted small">
        {c.entry ? (
          <>
            price {c.entry.id}, {c.entry.source} of {c.entry.date}
          </>
        ) : (
          "no price entry"
        )}
        {c.serviceTier && <> · tier {c.serviceTier}</>}
        {c.reason && <> · unpriced: {c.reason}</>}
      </p>
      <DataTable compact label={`Lines of ${item.name}`} columns={LINE_COLUMNS} rows={c.lines} rowKey={(l) => l.kind} />
    </details>
  );
}

/**
 * The breakdown panel: each call (open when `openCalls`), the lines summed by token kind when
 * there is more than one call, and the total as the sum of the lines. `partial`: more calls exist
 * than are shown (a paged read), so the total says it covers the calls shown.
 */
export function CostBreakdown({
  calls,
  openCalls = true,
  partial = false,
  children,
}: {
  calls: BreakdownCall[];
  openCalls?: boolean;
  partial?: boolean;
  /** Shown under the total (a "Show more" button). */
  children?: ComponentChildren;
}) {
  const totals = costTotals(calls.map((c) => c.call));
  return (
    <Panel headingId="cost-breakdown-h" title="Cost breakdown">
      {calls.length === 0 && <p class="muted">No model calls.</p>}
      {calls.map((item) => (
        <Call key={item.key} item={item} open={openCalls} />
      ))}
      {calls.length > 1 && (
        <div class="cost-kinds">
          <p class="small">
            <strong>All calls by token kind</strong>
          </p>
          <DataTable compact label="By token kind" columns={KIND_COLUMNS} rows={totals.byKind} rowKey={(k) => k.kind} />
        </div>
      )}
      <p data-testid="cost-total">
        <strong>{partial ? "Total of the calls shown" : "Total"}: </strong>
        {usd(totals.totalUsd)}{" "}
        <span class="muted small">
          (sum of {plural(totals.lineCount, "line")} over {plural(calls.length, "call")}
          {totals.unpricedCalls > 0 && (
            <>
              ; {num(totals.unpricedCalls)} unpriced, the priced calls {usd(totals.pricedUsd)}
            </>
          )}
          )
        </span>
      </p>
      {children}
    </Panel>
  );
}
