import { expect, test } from "bun:test";
import { createMetrics } from "./metrics.ts";

test("INGEST dead letters are counted per tenant; a tenant that is not a uuid counts as unknown", async () => {
  const metrics = createMetrics("processor");
  const tenant = "3F2504E0-4F89-41D3-9A0C-0305E82C3301";
  metrics.ingestDeadLetter(tenant);
  metrics.ingestDeadLetter(tenant.toLowerCase());
  metrics.ingestDeadLetter("x".repeat(200));
  metrics.ingestDeadLetter(undefined);
  const text = await metrics.registry.metrics();
  expect(text).toContain(`cellar_ingest_dead_letters_total{tenant="${tenant.toLowerCase()}",app="processor"} 2`);
  expect(text).toContain('cellar_ingest_dead_letters_total{tenant="unknown",app="processor"} 2');
});

test("the ledger's counts and the reconciliation's verdicts are series of their own", async () => {
  const m = createMetrics("processor");
  m.ledgerCount("accepted", "batch", 3);
  m.ledgerReconciled([{ tenant: "t-1", check: "trace_rows", items: 1 }]);
  const text = await m.registry.metrics();
  expect(text).toContain('cellar_ledger_items_total{stage="accepted",reason="batch",app="processor"} 3');
  expect(text).toContain('cellar_ledger_imbalance_items{tenant="t-1",check="trace_rows",app="processor"} 1');
  expect(text).toContain('cellar_ledger_unbalanced_tenants{app="processor"} 1');
  m.ledgerReconciled([]);
  expect(await m.registry.metrics()).toContain('cellar_ledger_unbalanced_tenants{app="processor"} 0');
});
