/**
 * TLS to NATS and to Postgres is one setting away (docs/deployment.md): a self-signed CA signs
 * server certificates for 127.0.0.1; nats-server runs the deployed deploy/nats/nats-tls.conf and
 * Postgres runs with ssl=on; the apps' own connection code (connectNatsAs, createDatabase with
 * postgresTls) connects encrypted and verified with NATS_TLS_CA_FILE / DATABASE_TLS_CA_FILE,
 * and refuses a server its CA did not sign. The same certificate serves the ingest host's
 * OTLP/gRPC listener (INGEST_GRPC_TLS_CERT_FILE / _KEY_FILE, docs/otlp.md).
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import * as grpc from "@grpc/grpc-js";
import { execFileSync } from "node:child_process";
import {
  chmodSync,
  chownSync,
  copyFileSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { tmpdir, userInfo } from "node:os";
import { join } from "node:path";
import { connectNatsAs, NatsAccessError } from "@cellar/shared/deploy/nats";
import { postgresTls } from "@cellar/shared/deploy/postgres";
import { createDatabase } from "@cellar/shared/db/client";
import { loadConfig } from "@cellar/shared/config";
import { createLogger } from "@cellar/shared/logger";
import { bytesMethod, createOtlpGrpcServer, grpcTlsFrom, TRACE_EXPORT } from "../apps/ingest/src/otlp/grpc/server.ts";
import { fakePipeline } from "../apps/ingest/test/fake-pipeline.ts";
import { DEPLOY_NATS_CONF, startNatsServer, type RunningNats } from "../scripts/infra/nats-server";
import { startEmbeddedPostgres, type RunningPostgres } from "../scripts/infra/postgres";

const dir = mkdtempSync(join(tmpdir(), "cellar-tls-"));
const f = (name: string) => join(dir, name);
const openssl = (...args: string[]) => execFileSync("openssl", args, { cwd: dir, stdio: "pipe" });

/** A CA, and a server certificate it signs for 127.0.0.1; a second CA that signed nothing here. */
function makeCertificates() {
  for (const ca of ["ca", "other-ca"]) {
    openssl(
      "req",
      "-x509",
      "-newkey",
      "rsa:2048",
      "-nodes",
      "-days",
      "2",
      "-subj",
      `/CN=cellar test ${ca}`,
      "-keyout",
      f(`${ca}.key`),
      "-out",
      f(`${ca}.pem`),
    );
  }
  openssl(
    "req",
    "-newkey",
    "rsa:2048",
    "-nodes",
    "-subj",
    "/CN=127.0.0.1",
    "-keyout",
    f("server.key"),
    "-out",
    f("server.csr"),
  );
  writeFileSync(f("san.ext"), "subjectAltName=IP:127.0.0.1,DNS:localhost\n");
  openssl(
    "x509",
    "-req",
    "-in",
    f("server.csr"),
    "-CA",
    f("ca.pem"),
    "-CAkey",
    f("ca.key"),
    "-CAcreateserial",
    "-days",
    "2",
    "-extfile",
    f("san.ext"),
    "-out",
    f("server.pem"),
  );
}

const passwords = {
  NATS_ADMIN_PASSWORD: "a1",
  NATS_INGEST_PASSWORD: "i1",
  NATS_PROCESSOR_PASSWORD: "p1",
  NATS_DISPATCHER_PASSWORD: "d1",
  NATS_PLATFORM_PASSWORD: "pl1",
};
let nats: RunningNats;
let pg: RunningPostgres;

beforeAll(async () => {
  makeCertificates();
  nats = await startNatsServer({
    storeDir: join(dir, "nats"),
    quiet: true,
    configFile: join(DEPLOY_NATS_CONF, "../nats-tls.conf"),
    env: { ...passwords, NATS_TLS_CERT_FILE: f("server.pem"), NATS_TLS_KEY_FILE: f("server.key") },
  });
  // Postgres reads its key as the server's OS user and wants it private to that user.
  const pgDir = join(dir, "pgtls");
  mkdirSync(pgDir, { recursive: true });
  copyFileSync(f("server.pem"), join(pgDir, "server.pem"));
  copyFileSync(f("server.key"), join(pgDir, "server.key"));
  chmodSync(pgDir, 0o755);
  chmodSync(join(pgDir, "server.pem"), 0o644);
  chmodSync(join(pgDir, "server.key"), 0o600);
  if (userInfo().uid === 0) {
    const uid = Number(execFileSync("id", ["-u", "postgres"], { encoding: "utf8" }).trim() || 0);
    if (uid) for (const file of ["server.pem", "server.key"]) chownSync(join(pgDir, file), uid, uid);
  }
  chmodSync(dir, 0o755);
  pg = await startEmbeddedPostgres({
    dataDir: join(dir, "pg"),
    persistent: false,
    flags: [
      "-c",
      "ssl=on",
      "-c",
      `ssl_cert_file=${join(pgDir, "server.pem")}`,
      "-c",
      `ssl_key_file=${join(pgDir, "server.key")}`,
    ],
  });
}, 60_000);

afterAll(async () => {
  await Promise.allSettled([nats?.stop(), pg?.stop()]);
  rmSync(dir, { recursive: true, force: true });
});

const natsSettings = (extra: Partial<Record<string, string>> = {}) => ({
  NATS_URL: nats.url,
  NATS_USER: "admin",
  NATS_PASSWORD: passwords.NATS_ADMIN_PASSWORD,
  NATS_TLS_CA_FILE: "",
  NATS_TLS_CERT_FILE: "",
  NATS_TLS_KEY_FILE: "",
  ...extra,
});

test("NATS: NATS_TLS_CA_FILE connects over verified TLS to the server running nats-tls.conf", async () => {
  const nc = await connectNatsAs(natsSettings({ NATS_TLS_CA_FILE: f("ca.pem") }), "tls-test");
  expect(nc.info?.tls_required).toBe(true);
  await nc.flush();
  await nc.close();
});

test("NATS: without the CA, or with a CA that did not sign the server, the connection fails naming the TLS settings", async () => {
  for (const ca of ["", f("other-ca.pem")]) {
    const err = await connectNatsAs(natsSettings({ NATS_TLS_CA_FILE: ca }), "tls-test").then(
      () => null,
      (e) => e,
    );
    expect(err).toBeInstanceOf(NatsAccessError);
    expect(err.message).toContain("NATS_TLS_CA_FILE");
  }
});

test("Postgres: DATABASE_TLS_CA_FILE connects over verified TLS", async () => {
  const database = createDatabase(pg.url, { max: 1, ssl: postgresTls({ DATABASE_TLS_CA_FILE: f("ca.pem") }) });
  try {
    const [row] = await database.sql`select ssl from pg_stat_ssl where pid = pg_backend_pid()`;
    expect(row.ssl).toBe(true);
  } finally {
    await database.close();
  }
});

test("Postgres: a CA that did not sign the server is refused", async () => {
  const database = createDatabase(pg.url, { max: 1, ssl: postgresTls({ DATABASE_TLS_CA_FILE: f("other-ca.pem") }) });
  try {
    await expect(database.sql`select 1`).rejects.toThrow(/certificate|self.signed|verify/i);
  } finally {
    await database.close();
  }
});

test("OTLP/gRPC: with INGEST_GRPC_TLS_CERT_FILE / _KEY_FILE the listener speaks TLS a client verifies with the CA; plaintext and another CA's clients get nothing", async () => {
  const config = loadConfig({
    SECRET_ENCRYPTION_KEY: btoa("cellar-test-secret-key-32-bytes!"),
    INGEST_GRPC_TLS_CERT_FILE: f("server.pem"),
    INGEST_GRPC_TLS_KEY_FILE: f("server.key"),
  });
  const fake = fakePipeline();
  const server = createOtlpGrpcServer({
    pipeline: fake.pipeline,
    maxMessageBytes: 1024 * 1024,
    logger: createLogger("silent"),
    tls: grpcTlsFrom(config),
  });
  const port = await server.listen(0, "127.0.0.1");
  const Client = grpc.makeGenericClientConstructor({ Export: bytesMethod(TRACE_EXPORT) } as never, "Tls");
  // An empty ExportTraceServiceRequest: nothing to store, answered OK.
  const exportWith = (credentials: grpc.ChannelCredentials) =>
    new Promise<number>((resolve) => {
      const client = new Client(`localhost:${port}`, credentials) as unknown as grpc.Client & { Export: Function };
      const metadata = new grpc.Metadata();
      metadata.set("authorization", "Bearer good");
      client.Export(Buffer.alloc(0), metadata, { deadline: Date.now() + 5_000 }, (err: grpc.ServiceError | null) => {
        client.close();
        resolve(err ? err.code : grpc.status.OK);
      });
    });
  const pem = (name: string) => readFileSync(f(name));
  try {
    expect(await exportWith(grpc.credentials.createSsl(pem("ca.pem")))).toBe(grpc.status.OK);
    expect(await exportWith(grpc.credentials.createSsl(pem("other-ca.pem")))).toBe(grpc.status.UNAVAILABLE);
    expect(await exportWith(grpc.credentials.createInsecure())).toBe(grpc.status.UNAVAILABLE);
  } finally {
    await server.stop();
  }
}, 30_000);
