/**
 * The deploy's one-shot setup (compose service `migrate`; run it before the apps on every
 * upgrade): applies the database migrations as the owner role, creates or updates the apps'
 * non-superuser role and its grants, and creates or updates the JetStream streams, consumers and
 * the activity bucket as the NATS admin user. Idempotent. Apps then run with
 * SETUP_ON_START=false as that role and their least-privilege NATS users.
 *
 *   DATABASE_URL            owner (the role that owns the tables; compose: POSTGRES_USER)
 *   APP_DATABASE_USER       the apps' role, created if missing (optional: skip role setup)
 *   APP_DATABASE_PASSWORD   its password (set on every run, so rotating it is a re-run)
 *   NATS_URL, NATS_USER, NATS_PASSWORD, NATS_TLS_*   the NATS admin user (deploy/nats/users.conf)
 *   DATABASE_TLS_CA_FILE    as for the apps
 *   NATS_REPLICAS           copies of every stream in a NATS cluster (1 on a single server, 3 on
 *                           a 3-node cluster); ensureTopology applies it to existing streams too
 */
import postgres from "postgres";
import { Value } from "@sinclair/typebox/value";
import { Type } from "@sinclair/typebox";
import { runMigrations } from "@cellar/shared/db/client";
import { createTopology, ensureTopology } from "@cellar/shared/nats/topology";
import { connectNatsAs } from "@cellar/shared/deploy/nats";
import { postgresTls } from "@cellar/shared/deploy/postgres";
import { DeploymentSettings, checkDeploymentSettings } from "@cellar/shared/deploy/settings";
import { ConfigSchema } from "@cellar/shared/config";

const SetupSchema = Type.Object({
  DATABASE_URL: ConfigSchema.properties.DATABASE_URL,
  NATS_URL: ConfigSchema.properties.NATS_URL,
  APP_DATABASE_USER: Type.String({ pattern: "^$|^[a-z_][a-z0-9_]{0,62}$", default: "" }),
  APP_DATABASE_PASSWORD: Type.String({ default: "" }),
  NATS_USER: DeploymentSettings.NATS_USER,
  NATS_PASSWORD: DeploymentSettings.NATS_PASSWORD,
  NATS_TLS_CA_FILE: DeploymentSettings.NATS_TLS_CA_FILE,
  NATS_TLS_CERT_FILE: DeploymentSettings.NATS_TLS_CERT_FILE,
  NATS_TLS_KEY_FILE: DeploymentSettings.NATS_TLS_KEY_FILE,
  DATABASE_TLS_CA_FILE: DeploymentSettings.DATABASE_TLS_CA_FILE,
  NATS_REPLICAS: Type.Integer({ minimum: 1, maximum: 5, default: 1 }),
});

function fail(message: string): never {
  console.error(`cellar migrate: ${message}`);
  process.exit(2);
}

const env = Object.fromEntries(
  Object.keys(SetupSchema.properties)
    .filter((k) => process.env[k] !== undefined)
    .map((k) => [k, process.env[k]]),
);
const settings = Value.Convert(SetupSchema, Value.Default(SetupSchema, env)) as typeof SetupSchema.static;
const firstError = Value.Errors(SetupSchema, settings).First();
if (firstError) fail(`invalid ${firstError.path.slice(1)}: ${firstError.message}`);
const problem = checkDeploymentSettings(settings);
if (problem) fail(problem);
if (settings.APP_DATABASE_USER && !settings.APP_DATABASE_PASSWORD)
  fail("invalid APP_DATABASE_PASSWORD: required when APP_DATABASE_USER is set");

const ssl = postgresTls(settings);
await runMigrations(settings.DATABASE_URL, { ssl });
console.log("migrations applied");

if (settings.APP_DATABASE_USER) {
  await ensureAppRole(settings.DATABASE_URL, settings.APP_DATABASE_USER, settings.APP_DATABASE_PASSWORD, ssl);
  console.log(`role ${settings.APP_DATABASE_USER}: login, no superuser, read/write on the tables`);
}

const nc = await connectNatsAs(settings, "cellar-migrate").catch((err) => fail((err as Error).message));
try {
  await ensureTopology(nc, createTopology(), { replicas: settings.NATS_REPLICAS });
  console.log(
    `streams, consumers and the activity bucket are in place (${settings.NATS_REPLICAS} replica${settings.NATS_REPLICAS > 1 ? "s" : ""})`,
  );
} catch (err) {
  fail(
    `cannot create the JetStream topology as NATS user "${settings.NATS_USER}" (the setup runs as admin): ${(err as Error).message}`,
  );
} finally {
  await nc.drain();
}
process.exit(0);

/**
 * The apps' role: may log in, read and write rows and use sequences; may not create, alter or
 * drop anything, and is no superuser. Default privileges cover tables later migrations create.
 */
async function ensureAppRole(url: string, role: string, password: string, ssl: ReturnType<typeof postgresTls>) {
  const sql = postgres(url, { max: 1, onnotice: () => {}, ...(ssl ? { ssl } : {}) });
  try {
    const ident = `"${role}"`; // validated above: lowercase letters, digits, underscores
    const literal = `'${password.replace(/'/g, "''")}'`;
    const [{ db }] = await sql<{ db: string }[]>`select current_database() as db`;
    const [exists] = await sql`select 1 from pg_roles where rolname = ${role}`;
    if (!exists) await sql.unsafe(`create role ${ident} login password ${literal}`);
    await sql.unsafe(
      `alter role ${ident} with login nosuperuser nocreatedb nocreaterole noreplication nobypassrls password ${literal}`,
    );
    await sql.unsafe(`grant connect on database "${db.replace(/"/g, '""')}" to ${ident}`);
    await sql.unsafe(`grant usage on schema public to ${ident}`);
    await sql.unsafe(`grant select, insert, update, delete on all tables in schema public to ${ident}`);
    await sql.unsafe(`grant usage, select on all sequences in schema public to ${ident}`);
    await sql.unsafe(
      `alter default privileges in schema public grant select, insert, update, delete on tables to ${ident}`,
    );
    await sql.unsafe(`alter default privileges in schema public grant usage, select on sequences to ${ident}`);
  } finally {
    await sql.end({ timeout: 5 });
  }
}
