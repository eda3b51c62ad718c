import { expect, test } from "bun:test";
import { runChaos, shortSchedule } from "../bench/chaos/run";

// The short chaos run (issue 12): a 3-node NATS cluster, Postgres and two processes of each app,
// load from three tenants, then one app kill, one NATS node loss and one Postgres restart. The
// full schedule is `npm run bench:chaos` (docs/reliability.md).
test("short chaos run: one app kill, one NATS node loss, one Postgres restart -- nothing acknowledged is lost, nothing matures twice, every webhook arrives signed", async () => {
  const lines: string[] = [];
  const result = await runChaos({
    schedule: shortSchedule(),
    instances: 2,
    tracesPerSecond: 40,
    steadyMs: 6_000,
    drainTimeoutMs: 60_000,
    recoveryTimeoutMs: 60_000,
    log: (l) => lines.push(l),
  }).catch((err) => {
    console.error(lines.join("\n"));
    throw err;
  });
  const total = result.rows[result.rows.length - 1];
  if (!result.ok) console.error(`${lines.join("\n")}\n${result.table}\n${result.examples.join("\n")}`);
  expect(total.acknowledged).toBeGreaterThan(500);
  expect({
    lost: total.lost,
    duplicated: total.duplicated,
    duplicatedMaturations: total.duplicatedMaturations,
    webhooksMissing: total.webhooksMissing,
    badSignatures: total.badSignatures,
    notMatured: total.notMatured,
  }).toEqual({ lost: 0, duplicated: 0, duplicatedMaturations: 0, webhooksMissing: 0, badSignatures: 0, notMatured: 0 });
  // Every fault ended with the system whole again (all /ready, a canary through every ingest stored).
  for (const row of result.rows.slice(1, -1)) expect(Number.isFinite(row.recoveryS)).toBe(true);
  // The platform never hung: every read answered (503 at worst) within 5 s.
  expect(total.platformSlow).toBe(0);
}, 300_000);
