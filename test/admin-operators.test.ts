import { expect, test } from "bun:test";
import { runAdmin } from "./helpers/admin-cli";
import { useTestDatabase } from "./helpers/test-database";

const testDb = useTestDatabase();

const admin = (...args: string[]) => runAdmin(args, { databaseUrl: testDb.url });

const memberships = async (userId: string) =>
  (
    await testDb.database.sql`select project_id from project_memberships where user_id = ${userId} order by project_id`
  ).map((r) => r.project_id);

test("tenant create prints the default project id, and project list shows it with its services", () => {
  const tenant = admin("tenant", "create", "--name", "Acme");
  expect(tenant.code).toBe(0);
  expect(tenant.json.defaultProjectId).toMatch(/^[0-9a-f-]{36}$/);
  const search = admin("project", "create", "--tenant", tenant.json.id, "--name", "search");
  admin("service", "create", "--tenant", tenant.json.id, "--name", "bot");
  admin("service", "create", "--tenant", tenant.json.id, "--name", "finder", "--project", search.json.id);
  const list = admin("project", "list", "--tenant", tenant.json.id);
  expect(list.code).toBe(0);
  expect(list.json.projects.map((p: any) => [p.id, p.name, p.isDefault, p.services])).toEqual([
    [tenant.json.defaultProjectId, "default", true, ["bot"]],
    [search.json.id, "search", false, ["finder"]],
  ]);
});

test("user update --projects replaces a viewer's projects (a viewer created without any can be given the default one)", async () => {
  const tenant = admin("tenant", "create", "--name", "Beta").json;
  const other = admin("project", "create", "--tenant", tenant.id, "--name", "other").json;
  const viewer = admin("user", "create", "--tenant", tenant.id, "--email", "v@beta.test", "--role", "viewer").json;
  expect(await memberships(viewer.id)).toEqual([]);

  const given = admin("user", "update", "--id", viewer.id, "--projects", tenant.defaultProjectId);
  expect(given.code).toBe(0);
  expect(given.json).toEqual({ id: viewer.id, projects: [tenant.defaultProjectId] });
  expect(await memberships(viewer.id)).toEqual([tenant.defaultProjectId]);

  const both = admin("user", "update", "--id", viewer.id, "--projects", `${other.id},${tenant.defaultProjectId}`);
  expect(both.json.projects).toEqual([other.id, tenant.defaultProjectId].sort());
  expect(admin("user", "update", "--id", viewer.id, "--projects", "").json.projects).toEqual([]);
  expect(await memberships(viewer.id)).toEqual([]);
});

test("user update refuses a project of another tenant, an unknown user and a missing --projects, changing nothing", async () => {
  const a = admin("tenant", "create", "--name", "A").json;
  const b = admin("tenant", "create", "--name", "B").json;
  const user = admin(
    "user",
    "create",
    "--tenant",
    a.id,
    "--email",
    "u@a.test",
    "--role",
    "member",
    "--projects",
    a.defaultProjectId,
  ).json;
  const foreign = admin("user", "update", "--id", user.id, "--projects", b.defaultProjectId);
  expect(foreign.code).not.toBe(0);
  expect(foreign.stderr).toContain(`no project ${b.defaultProjectId}`);
  expect(await memberships(user.id)).toEqual([a.defaultProjectId]);
  expect(admin("user", "update", "--id", crypto.randomUUID(), "--projects", a.defaultProjectId).stderr).toContain(
    "no user",
  );
  expect(admin("user", "update", "--id", user.id).stderr).toContain("--projects is required");
  expect(admin("user", "update", "--id", user.id, "--projects", "nope").stderr).toContain(
    '--projects "nope" is not an id',
  );
});

test("key list shows each key's id, kind, prefix and state, never the key", () => {
  const tenant = admin("tenant", "create", "--name", "Keys").json;
  const owner = admin("user", "create", "--tenant", tenant.id, "--email", "o@keys.test", "--role", "owner").json;
  const telemetry = admin("key", "create", "--tenant", tenant.id, "--kind", "telemetry").json;
  admin("service", "create", "--tenant", tenant.id, "--name", "bot");
  const dsn = admin("key", "create", "--tenant", tenant.id, "--kind", "dsn-server", "--service", "bot").json;
  const platform = admin("key", "create", "--user", owner.id, "--kind", "platform").json;
  admin("key", "revoke", "--id", telemetry.id);
  const list = admin("key", "list", "--tenant", tenant.id);
  expect(list.code).toBe(0);
  const byId = Object.fromEntries(list.json.keys.map((k: any) => [k.id, k]));
  expect(Object.keys(byId).sort()).toEqual([telemetry.id, dsn.id, platform.id].sort());
  expect(byId[telemetry.id]).toMatchObject({ kind: "telemetry", revoked: true });
  expect(byId[dsn.id]).toMatchObject({ kind: "dsn-server", serviceName: "bot", revoked: false });
  expect(byId[platform.id]).toMatchObject({ kind: "platform", userId: owner.id, revoked: false });
  expect(telemetry.key.startsWith(byId[telemetry.id].prefix)).toBe(true);
  for (const k of [telemetry.key, dsn.key, platform.key]) expect(list.stdout).not.toContain(k);
  expect(list.stdout).not.toContain("hash");
});
