import { Type } from "@sinclair/typebox";
import { existsSync } from "node:fs";

/**
 * Settings a deployment changes: NATS credentials and TLS, Postgres TLS, the ops ports of the
 * apps without a public API, pool size, and whether an app sets up the database and streams
 * itself. Spread into ConfigSchema (shared/config.ts); docs/deployment.md explains each.
 */
export const DeploymentSettings = {
  /** This app's NATS user (deploy/nats/users.conf); empty = connect without credentials (tests). */
  NATS_USER: Type.String({ default: "" }),
  NATS_PASSWORD: Type.String({ default: "" }),
  /** PEM CA that signed the NATS server certificate; setting it turns TLS on. */
  NATS_TLS_CA_FILE: Type.String({ default: "" }),
  /** Client certificate and key, for a server that verifies clients (mutual TLS). */
  NATS_TLS_CERT_FILE: Type.String({ default: "" }),
  NATS_TLS_KEY_FILE: Type.String({ default: "" }),
  /** PEM CA that signed the Postgres server certificate; setting it turns verified TLS on. */
  DATABASE_TLS_CA_FILE: Type.String({ default: "" }),
  /** Connections per Postgres pool; 0 = the app's default (ingest/platform 10, processor/dispatcher 20). */
  DATABASE_POOL_MAX: Type.Integer({ minimum: 0, maximum: 500, default: 0 }),
  /**
   * true: the app applies migrations and creates streams/consumers at start (tests, single
   * process). Deployments set false and run the one-shot setup (scripts/migrate.ts) instead, so
   * apps run as a non-owner Postgres role and a least-privilege NATS user.
   */
  SETUP_ON_START: Type.Boolean({ default: true }),
  /** /health, /ready and /metrics of the two apps without a public API. */
  PROCESSOR_PORT: Type.Integer({ minimum: 0, maximum: 65535, default: 3300 }),
  DISPATCHER_PORT: Type.Integer({ minimum: 0, maximum: 65535, default: 3400 }),
  /** When set, /metrics answers only `Authorization: Bearer <token>` (it is on public ports). */
  METRICS_TOKEN: Type.String({ default: "" }),
};

export const DEPLOYMENT_SECRETS = ["NATS_PASSWORD", "METRICS_TOKEN"] as const;

/** Cross-field checks; returns the message for the first problem, naming the variable. */
export function checkDeploymentSettings(c: {
  NATS_USER: string;
  NATS_PASSWORD: string;
  NATS_TLS_CA_FILE: string;
  NATS_TLS_CERT_FILE: string;
  NATS_TLS_KEY_FILE: string;
  DATABASE_TLS_CA_FILE: string;
}): string | undefined {
  if (c.NATS_PASSWORD && !c.NATS_USER) return "invalid NATS_USER: required when NATS_PASSWORD is set";
  if (c.NATS_USER && !c.NATS_PASSWORD) return "invalid NATS_PASSWORD: required when NATS_USER is set";
  if (Boolean(c.NATS_TLS_CERT_FILE) !== Boolean(c.NATS_TLS_KEY_FILE)) {
    return `invalid ${c.NATS_TLS_CERT_FILE ? "NATS_TLS_KEY_FILE" : "NATS_TLS_CERT_FILE"}: client certificate and key go together`;
  }
  for (const key of ["NATS_TLS_CA_FILE", "NATS_TLS_CERT_FILE", "NATS_TLS_KEY_FILE", "DATABASE_TLS_CA_FILE"] as const) {
    if (c[key] && !existsSync(c[key])) return `invalid ${key}: no file at ${JSON.stringify(c[key])}`;
  }
  return undefined;
}
