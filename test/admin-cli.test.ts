import { expect, test } from "bun:test";
import { KeyResolver } from "@cellar/shared/auth/keys";
import { runAdmin } from "./helpers/admin-cli";
import { useTestDatabase } from "./helpers/test-database";

const testDb = useTestDatabase();

const admin = (...args: string[]) => runAdmin(args, { databaseUrl: testDb.url });

test("tenant, project, service, user and keys are created and keys resolve to their kind", async () => {
  const tenant = admin("tenant", "create", "--name", "Acme", "--plan", "pro", "--webhooks");
  expect(tenant.code).toBe(0);
  expect(tenant.json.id).toMatch(/^[0-9a-f-]{36}$/);
  const project = admin("project", "create", "--tenant", tenant.json.id, "--name", "search");
  expect(project.code).toBe(0);
  const service = admin("service", "create", "--tenant", tenant.json.id, "--name", "bot", "--project", project.json.id);
  expect(service.code).toBe(0);
  const user = admin(
    "user",
    "create",
    "--tenant",
    tenant.json.id,
    "--email",
    "v@acme.test",
    "--role",
    "viewer",
    "--projects",
    project.json.id,
  );
  expect(user.code).toBe(0);
  const telemetry = admin("key", "create", "--tenant", tenant.json.id, "--kind", "telemetry");
  const dsn = admin(
    "key",
    "create",
    "--tenant",
    tenant.json.id,
    "--kind",
    "dsn-client",
    "--service",
    "bot",
    "--origins",
    "https://app.acme.test",
  );
  const platform = admin("key", "create", "--user", user.json.id, "--kind", "platform");
  expect(telemetry.json.key).toStartWith("cel_tk_");
  expect(dsn.json.key).toStartWith("svc-ing-c-");
  expect(platform.json.key).toStartWith("cel_pk_");

  const resolver = new KeyResolver(testDb.database.db, { ttlMs: 0 });
  expect(await resolver.resolve(dsn.json.key)).toMatchObject({
    kind: "dsn-client",
    serviceName: "bot",
    allowedOrigins: ["https://app.acme.test"],
  });
  expect(await resolver.resolve(platform.json.key)).toMatchObject({
    kind: "platform",
    userRole: "viewer",
    tenantPlan: "pro",
  });

  expect(admin("key", "revoke", "--id", telemetry.json.id).code).toBe(0);
  expect(await resolver.resolve(telemetry.json.key)).toBeNull();
  expect(admin("user", "deprovision", "--id", user.json.id).code).toBe(0);
  expect(await resolver.resolve(platform.json.key)).toBeNull();
  const updated = admin("tenant", "update", "--id", tenant.json.id, "--webhooks", "off");
  expect(updated.json).toMatchObject({ webhooks: false, plan: "pro" });
});

test("intents are defined, listed and deleted per service", () => {
  const tenant = admin("tenant", "create", "--name", "Intentful", "--plan", "pro");
  const defined = admin(
    "intent",
    "define",
    "--tenant",
    tenant.json.id,
    "--service",
    "bot",
    "--name",
    "refund",
    "--description",
    "wants money back",
    "--example",
    "I want a refund",
    "--example",
    "give me my money back",
  );
  expect(defined.code).toBe(0);
  expect(defined.json).toMatchObject({ name: "refund", examples: ["I want a refund", "give me my money back"] });
  const listed = admin("intent", "list", "--tenant", tenant.json.id, "--service", "bot");
  expect(listed.json.intents.map((i: any) => i.name)).toEqual(["refund"]);
  expect(admin("intent", "delete", "--tenant", tenant.json.id, "--service", "bot", "--name", "refund").code).toBe(0);
  expect(admin("intent", "list", "--tenant", tenant.json.id, "--service", "bot").json.intents).toEqual([]);
  const missing = admin("intent", "delete", "--tenant", tenant.json.id, "--service", "bot", "--name", "refund");
  expect(missing.code).not.toBe(0);
  expect(missing.stderr).toContain("refund");
});

test("detector thresholds are set, shown and reset per service; bad settings are refused naming them", () => {
  const tenant = admin("tenant", "create", "--name", "Tuned", "--plan", "pro");
  const set = admin(
    "detectors",
    "set",
    "--tenant",
    tenant.json.id,
    "--service",
    "bot",
    "--set",
    "latency_outlier.minSamples=50",
    "--set",
    "refusal.enabled=false",
  );
  expect(set.code).toBe(0);
  expect(set.json.overrides).toEqual({ latency_outlier: { minSamples: 50 }, refusal: { enabled: false } });
  expect(set.json.effective.latency_outlier).toMatchObject({ minSamples: 50, madK: 6 });
  const shown = admin("detectors", "show", "--tenant", tenant.json.id, "--service", "bot");
  expect(shown.json.effective.refusal.enabled).toBe(false);
  for (const [bad, named] of [
    ["latency_outlier.nope=1", "nope"],
    ["nodetector.x=1", "nodetector"],
    ["refusal.enabled=maybe", "refusal.enabled"],
    ["tool_loop.repeats=-2", "tool_loop.repeats"],
    ["garbage", "detector.key=value"],
  ]) {
    const r = admin("detectors", "set", "--tenant", tenant.json.id, "--service", "bot", "--set", bad);
    expect(r.code).not.toBe(0);
    expect(r.stderr).toContain(named);
  }
  const reset = admin("detectors", "reset", "--tenant", tenant.json.id, "--service", "bot", "--detector", "refusal");
  expect(reset.json.overrides).toEqual({ latency_outlier: { minSamples: 50 } });
  expect(admin("detectors", "reset", "--tenant", tenant.json.id, "--service", "bot").json.overrides).toEqual({});
  expect(admin("maturation", "failures", "--tenant", tenant.json.id).json).toEqual({ failures: [] });
});

test.each([
  [["tenant", "create"], "--name"],
  [["tenant", "create", "--name", "x", "--plan", "gold"], "--plan"],
  [
    ["user", "create", "--tenant", "00000000-0000-0000-0000-000000000000", "--email", "a@b.c", "--role", "root"],
    "--role",
  ],
  [["key", "create", "--tenant", "not-a-uuid", "--kind", "telemetry"], "--tenant"],
  [["key", "create", "--kind", "magic"], "--kind"],
  [["frobnicate", "now"], "unknown command"],
])("bad input %p exits non-zero naming %s", (args, needle) => {
  const r = admin(...args);
  expect(r.code).not.toBe(0);
  expect(r.stderr).toContain(needle);
  expect(r.json).toBeNull();
});

test("secrets reencrypt: moves every webhook secret and evaluator key to the current key; old keys can then be dropped", async () => {
  const { SecretBox, randomBytes, toBase64 } = await import("@cellar/shared/crypto");
  const { bootstrapTenant, createService } = await import("@cellar/shared/admin/tenancy");
  const oldKey = toBase64(randomBytes(32));
  const newKey = toBase64(randomBytes(32));
  const t = await bootstrapTenant(testDb.database.db, { name: "Rekey", webhooks: true, email: "o@rekey.test" });
  const svc = await createService(testDb.database.db, { tenantId: t.tenantId, name: "rekey-bot" });
  const id = crypto.randomUUID();
  const old = new SecretBox(oldKey);
  await testDb.database
    .sql`insert into webhook_subscriptions (id, tenant_id, trace_service_id, name, url, event_types, secret_encrypted, previous_secret_encrypted, previous_secret_expires_at)
    values (${id}, ${t.tenantId}, ${svc.id}, 'rekey', 'https://hooks.example.com/x', ${["session.matured"]}, ${await old.seal("whsec_now", id)}, ${await old.seal("whsec_before", id)}, now() + interval '1 hour')`;
  // An evaluator's judge key (docs/evaluations.md) is sealed the same way, its row id as associated data.
  const evaluatorId = crypto.randomUUID();
  await testDb.database
    .sql`insert into evaluators (id, tenant_id, trace_service_id, name, target, definition, key_encrypted)
    values (${evaluatorId}, ${t.tenantId}, ${svc.id}, 'judge', 'session', '{}'::jsonb, ${await old.seal("sk-judge", evaluatorId)})`;

  const run = (env: Record<string, string>) => runAdmin(["secrets", "reencrypt"], { databaseUrl: testDb.url, env });
  const first = run({ SECRET_ENCRYPTION_KEY: newKey, SECRET_ENCRYPTION_KEYS_PREVIOUS: oldKey });
  expect(first.code).toBe(0);
  expect(JSON.parse(first.stdout)).toEqual({ checked: 3, reencrypted: 3, unreadable: [] });
  const [row] = await testDb.database
    .sql`select secret_encrypted, previous_secret_encrypted from webhook_subscriptions where id = ${id}`;
  const onlyNew = new SecretBox(newKey);
  expect(await onlyNew.open(row.secret_encrypted, id)).toBe("whsec_now");
  expect(await onlyNew.open(row.previous_secret_encrypted, id)).toBe("whsec_before");
  const [judgeRow] = await testDb.database.sql`select key_encrypted from evaluators where id = ${evaluatorId}`;
  expect(await onlyNew.open(judgeRow.key_encrypted, evaluatorId)).toBe("sk-judge");
  // Again: nothing left to do. Without the old key, nothing is unreadable either.
  expect(JSON.parse(run({ SECRET_ENCRYPTION_KEY: newKey }).stdout)).toEqual({
    checked: 3,
    reencrypted: 0,
    unreadable: [],
  });
  // A key that never sealed them: the subscription is reported, nothing is rewritten.
  expect(JSON.parse(run({ SECRET_ENCRYPTION_KEY: toBase64(randomBytes(32)) }).stdout)).toEqual({
    checked: 3,
    reencrypted: 0,
    unreadable: [id, `evaluator:${evaluatorId}`],
  });
});

test("storage compact-metrics runs online and says how many rows it compacted", () => {
  // The compaction itself is tested against every platform answer in test/upgrade-storage-shape.test.ts.
  const r = admin("storage", "compact-metrics");
  expect(r.code).toBe(0);
  expect(r.json).toEqual({ compacted: 0 });
  expect(admin("storage", "compact-everything").code).not.toBe(0);
});

test("evaluator list, pause and resume: state and spend, never the key", async () => {
  const { bootstrapTenant, createService } = await import("@cellar/shared/admin/tenancy");
  const t = await bootstrapTenant(testDb.database.db, { name: "Judges", email: "o@judges.test" });
  const svc = await createService(testDb.database.db, { tenantId: t.tenantId, name: "judged-bot" });
  const id = crypto.randomUUID();
  await testDb.database
    .sql`insert into evaluators (id, tenant_id, trace_service_id, name, target, definition, key_encrypted, budget_day, budget_spent_usd)
    values (${id}, ${t.tenantId}, ${svc.id}, 'helpfulness', 'session', ${testDb.database.sql.json({ judge: { model: "m" }, daily_budget_usd: 2 } as never)},
      'v2:00000000:c2VhbGVk', current_date, 0.5)`;
  const list = admin("evaluator", "list", "--tenant", t.tenantId);
  expect(list.code).toBe(0);
  expect(list.json.evaluators).toEqual([
    {
      id,
      service: "judged-bot",
      name: "helpfulness",
      version: 1,
      target: "session",
      kind: "judge",
      status: "active",
      statusReason: null,
      spentTodayUsd: 0.5,
      dailyBudgetUsd: 2,
    },
  ]);
  expect(JSON.stringify(list.json)).not.toContain("c2VhbGVk");
  expect(admin("evaluator", "pause", "--id", id).json).toMatchObject({
    status: "paused",
    statusReason: "paused by an operator",
  });
  expect(admin("evaluator", "resume", "--id", id).json).toMatchObject({ status: "active", statusReason: null });
  expect(admin("evaluator", "pause", "--id", crypto.randomUUID()).code).not.toBe(0);
});

test("evaluator create and edit from files: the API's body and writer, the key sealed and never printed", async () => {
  const { writeFileSync, mkdtempSync } = await import("node:fs");
  const { tmpdir } = await import("node:os");
  const { join } = await import("node:path");
  const { SecretBox, randomBytes, toBase64 } = await import("@cellar/shared/crypto");
  const { bootstrapTenant, createService } = await import("@cellar/shared/admin/tenancy");
  const { getEvaluator } = await import("../apps/platform/src/evaluations/service.ts");
  const t = await bootstrapTenant(testDb.database.db, { name: "Files", email: "o@files.test" });
  await createService(testDb.database.db, { tenantId: t.tenantId, name: "filed-bot" });
  const dir = mkdtempSync(join(tmpdir(), "cellar-evaluator-"));
  const file = (name: string, body: unknown) => {
    const path = join(dir, name);
    writeFileSync(path, typeof body === "string" ? body : JSON.stringify(body));
    return path;
  };
  const key = toBase64(randomBytes(32));
  const env = { SECRET_ENCRYPTION_KEY: key, WEBHOOK_INSECURE_ALLOWLIST: "127.0.0.0/8" };
  const cli = (...args: string[]) => runAdmin(args, { databaseUrl: testDb.url, env });
  const create = (name: string, body: unknown, service = "filed-bot", tenant = t.tenantId) =>
    cli("evaluator", "create", "--tenant", tenant, "--service", service, "--file", file(name, body));

  const check = create("check.json", { name: "cites", check: { type: "length", min: 1 } });
  expect(check.code).toBe(0);
  expect(check.json).toMatchObject({
    service: "filed-bot",
    name: "cites",
    version: 1,
    kind: "check",
    hasApiKey: false,
  });

  const judgeBody = {
    name: "helpfulness",
    judge: { provider: "openai", url: "http://127.0.0.1:9/v1/chat/completions", model: "m", prompt: "Rate it." },
    output: { kind: "number", min: 0, max: 1 },
    api_key: "sk-never-printed",
    daily_budget_usd: 3,
  };
  const judge = create("judge.json", judgeBody);
  expect(judge.code).toBe(0);
  expect(judge.json).toMatchObject({ name: "helpfulness", version: 1, kind: "judge", hasApiKey: true });
  expect(judge.stdout + judge.stderr).not.toContain("sk-never-printed");
  const [row] = await testDb.database.sql`select key_encrypted from evaluators where id = ${judge.json.id}`;
  expect(await new SecretBox(key).open(row.key_encrypted, judge.json.id)).toBe("sk-never-printed");

  const listed = cli("evaluator", "list", "--tenant", t.tenantId);
  expect(listed.json.evaluators.map((e: { name: string }) => e.name)).toEqual(["cites", "helpfulness"]);
  expect(listed.stdout).not.toContain("sk-never-printed");
  const deps = { sql: testDb.database.sql, now: () => new Date() } as never;
  const owner = { keyId: "k", tenantId: t.tenantId, userId: t.ownerId, role: "owner", plan: "free" } as const;
  expect(await getEvaluator(deps, owner, judge.json.id)).toMatchObject({ has_api_key: true, version: 1 });

  // Definition fields make version 2 (the key stays); a name taken in the service is a conflict.
  const edited = cli("evaluator", "edit", "--id", judge.json.id, "--file", file("edit.json", { sampling_rate: 0.5 }));
  expect(edited.code).toBe(0);
  expect(edited.json).toMatchObject({ version: 2, hasApiKey: true, definition: { sampling_rate: 0.5 } });
  const versions = await testDb.database
    .sql`select version from evaluator_versions where evaluator_id = ${judge.json.id} order by version`;
  expect(versions.map((v) => v.version)).toEqual([1, 2]);
  expect(create("again.json", judgeBody).stderr).toContain("already has an evaluator named");

  // Bad input names the field, as the API's 400 does; nothing is written.
  const badCreate = create("bad.json", { name: "bad", check: { type: "length", min: -1 } });
  expect(badCreate.code).not.toBe(0);
  expect(badCreate.stderr).toContain("check");
  const badEdit = cli(
    "evaluator",
    "edit",
    "--id",
    check.json.id,
    "--file",
    file("bad-edit.json", { sampling_rate: 2 }),
  );
  expect(badEdit.code).not.toBe(0);
  expect(badEdit.stderr).toContain("sampling_rate");
  const badUrl = create("bad-url.json", {
    ...judgeBody,
    name: "outside",
    judge: { ...judgeBody.judge, url: "http://10.1.2.3/v1" },
  });
  expect(badUrl.code).not.toBe(0);
  expect(badUrl.stderr).toContain("judge.url");
  expect(create("not-json.json", "{ nope").stderr).toContain("--file");
  expect(create("unknown-field.json", { name: "x", check: { type: "length", min: 1 }, colour: "red" }).code).not.toBe(
    0,
  );

  // An unknown tenant or service, or evaluator, errors.
  const noService = create("svc.json", { name: "y", check: { type: "length", min: 1 } }, "no-such-bot");
  expect(noService.code).not.toBe(0);
  expect(noService.stderr).toContain("--service");
  const noTenant = create(
    "tenant.json",
    { name: "y", check: { type: "length", min: 1 } },
    "filed-bot",
    crypto.randomUUID(),
  );
  expect(noTenant.code).not.toBe(0);
  expect(noTenant.stderr).toContain("no such tenant");
  expect(cli("evaluator", "edit", "--id", crypto.randomUUID(), "--file", file("e.json", {})).code).not.toBe(0);
  const rows = await testDb.database.sql`select name from evaluators where tenant_id = ${t.tenantId} order by name`;
  expect(rows.map((r) => r.name)).toEqual(["cites", "helpfulness"]);
});
