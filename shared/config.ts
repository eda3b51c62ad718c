import { Type, type Static } from "@sinclair/typebox";
import { Value } from "@sinclair/typebox/value";
import { existsSync } from "node:fs";
import { DeploymentSettings, checkDeploymentSettings, DEPLOYMENT_SECRETS } from "./deploy/settings.ts";
import { normalizeEndpoint } from "./auth/dsn.ts";
import { parseCidrList } from "./webhooks/address.ts";

function isCidr(text: string): boolean {
  try {
    return parseCidrList(text).length === 1;
  } catch {
    return false;
  }
}

/** Every setting the apps read from the environment; defaults and coercion live here. */
export const ConfigSchema = Type.Object({
  NATS_URL: Type.String({ minLength: 1, default: "nats://127.0.0.1:4222" }),
  /** Copies of every stream, consumer and the KV bucket: 1 on one server, 3 (or 5) on a cluster. */
  NATS_REPLICAS: Type.Integer({ minimum: 1, maximum: 5, default: 1 }),
  DATABASE_URL: Type.String({
    pattern: "^postgres(ql)?://",
    default: "postgres://cellar:cellar@127.0.0.1:5432/cellar",
  }),
  /**
   * Optional: the platform's telemetry and analysis reads go to this server (a streaming replica
   * of DATABASE_URL), with read-your-writes where an answer needs it (docs/scaling.md).
   */
  DATABASE_READ_URL: Type.Optional(Type.String({ pattern: "^postgres(ql)?://" })),
  INGEST_PORT: Type.Integer({ minimum: 0, maximum: 65535, default: 3100 }),
  /**
   * The ingest host's OTLP/gRPC listener (docs/otlp.md): 4317, the port OpenTelemetry SDKs and
   * collectors send gRPC to; 0 any free port; `off` no gRPC listener (/v1/* over HTTP stay).
   */
  INGEST_GRPC_PORT: Type.Union([Type.Integer({ minimum: 0, maximum: 65535 }), Type.Literal("off")], { default: 4317 }),
  /**
   * PEM certificate chain and key of the OTLP/gRPC listener: both set, it serves TLS (docs/otlp.md);
   * empty, plaintext, for a TLS-terminating proxy in front as with the HTTP port.
   */
  INGEST_GRPC_TLS_CERT_FILE: Type.String({ default: "" }),
  INGEST_GRPC_TLS_KEY_FILE: Type.String({ default: "" }),
  /**
   * The ingest host's public base URL (https://ingest.example.com): new DSNs carry it
   * (docs/sdks.md). Unset: DSNs are minted in the legacy form, without an endpoint.
   */
  INGEST_PUBLIC_URL: Type.String({ default: "" }),
  PLATFORM_PORT: Type.Integer({ minimum: 0, maximum: 65535, default: 3200 }),
  /** /health and /ready of the apps without an HTTP API; unset: processor 3300, dispatcher 3400. */
  HEALTH_PORT: Type.Optional(Type.Integer({ minimum: 0, maximum: 65535 })),
  /** Idle time after which a session or trace matures. The contract leaves the number open. */
  MATURATION_WINDOW_SECONDS: Type.Integer({ minimum: 1, maximum: 86_400, default: 180 }),
  /** At most one activity-key put per session per this many ms (0: one per write). docs/maturation.md */
  ACTIVITY_PUT_INTERVAL_MS: Type.Integer({ minimum: 0, maximum: 60_000, default: 5000 }),
  /** Days telemetry is kept: one number for every plan, or per plan `free=30,pro=90`. docs/retention.md */
  RETENTION_DAYS: Type.String({ pattern: "^(\\d+|(free|pro)=\\d+(,(free|pro)=\\d+)*)$", default: "free=30,pro=90" }),
  /** How often the processor checks the ledger's books, seconds (docs/ledger.md). */
  LEDGER_RECONCILE_SECONDS: Type.Integer({ minimum: 1, maximum: 3600, default: 30 }),
  /** How often the processor's retention job runs, seconds (0: never). */
  RETENTION_INTERVAL_SECONDS: Type.Integer({ minimum: 0, maximum: 86_400 * 7, default: 3600 }),
  /** 32 bytes, base64; encrypts webhook signing secrets at rest (AES-GCM). */
  SECRET_ENCRYPTION_KEY: Type.String({ minLength: 1 }),
  /** Retired SECRET_ENCRYPTION_KEY values (comma-separated): they still open secrets sealed under them. */
  SECRET_ENCRYPTION_KEYS_PREVIOUS: Type.String({ default: "" }),
  /** Postgres statement_timeout of the platform's reads, ms: a slower read is cancelled (503). */
  PLATFORM_STATEMENT_TIMEOUT_MS: Type.Integer({ minimum: 100, maximum: 600_000, default: 5_000 }),
  /** Comma-separated CIDRs whose webhook destinations skip the HTTPS and public-address rules. */
  WEBHOOK_INSECURE_ALLOWLIST: Type.String({ default: "" }),
  /**
   * Comma-separated CIDRs of the load balancers / reverse proxies in front of ingest and the
   * platform: from these peers the client address is taken from X-Forwarded-For (per-address limits).
   */
  TRUSTED_PROXIES: Type.String({ default: "" }),
  /** Multiplies every webhook retry delay; tests shrink it. */
  WEBHOOK_RETRY_TIME_SCALE: Type.Number({ exclusiveMinimum: 0, maximum: 1000, default: 1 }),
  /** Seconds to wait for a webhook receiver's response before counting a timeout. */
  WEBHOOK_TIMEOUT_SECONDS: Type.Number({ exclusiveMinimum: 0, maximum: 120, default: 15 }),
  /** Seconds to wait for a judge's answer (docs/evaluations.md); an evaluator's timeout_seconds overrides it. */
  EVALUATION_TIMEOUT_SECONDS: Type.Number({ exclusiveMinimum: 0, maximum: 120, default: 30 }),
  /** Largest accepted ingestion body, bytes. NATS max_payload must be at least this plus headers. */
  INGEST_MAX_BODY_BYTES: Type.Integer({ minimum: 1024, maximum: 64 * 1024 * 1024, default: 4 * 1024 * 1024 }),
  /** Requests per second per credential (token bucket refill) and burst size. 0 disables. */
  INGEST_RATE_LIMIT_PER_SECOND: Type.Number({ minimum: 0, default: 500 }),
  INGEST_RATE_LIMIT_BURST: Type.Integer({ minimum: 1, default: 1000 }),
  /**
   * The most a 429 is held back for a credential that came back before its Retry-After
   * (apps/ingest/src/pacing.ts, docs/ingestion.md "Rate limits"); 0 answers every 429 at once.
   */
  INGEST_RATE_LIMIT_PACING_MS: Type.Integer({ minimum: 0, maximum: 60_000, default: 1000 }),
  /**
   * INGEST messages of at least this many bytes (a many-span OTLP request, a /raw/batch body) go
   * out on ingest's second NATS connection, the bulk lane, so a small publish and its PubAck never
   * wait behind a large one's write (docs/ingestion.md "The bulk lane").
   */
  INGEST_BULK_LANE_BYTES: Type.Integer({ minimum: 1024, maximum: 64 * 1024 * 1024, default: 64 * 1024 }),
  /**
   * Threads the ingest host works large admitted requests on (apps/ingest/src/offload/,
   * docs/ingestion.md "Large requests off the event loop"): their decoding and garbage stay off the
   * event loop every other request is answered on; 0 works every request on the event loop.
   */
  INGEST_OFFLOAD_WORKERS: Type.Integer({ minimum: 0, maximum: 64, default: 1 }),
  /** OTLP requests and /raw/batch bodies of at least this many bytes (a gzip body: the inflated size its trailer states) go to an offload thread. */
  INGEST_OFFLOAD_MIN_BYTES: Type.Integer({ minimum: 1024, maximum: 1024 ** 3, default: 64 * 1024 }),
  /** OpenAI-compatible chat endpoint for AI-written TL;DRs; extractive summaries without it. */
  SUMMARY_LLM_URL: Type.String({ default: "" }),
  SUMMARY_LLM_API_KEY: Type.String({ default: "" }),
  SUMMARY_LLM_MODEL: Type.String({ default: "gpt-4o-mini" }),
  ...DeploymentSettings,
  LOG_LEVEL: Type.Union(
    [Type.Literal("debug"), Type.Literal("info"), Type.Literal("warn"), Type.Literal("error"), Type.Literal("silent")],
    { default: "info" },
  ),
});
export type Config = Static<typeof ConfigSchema>;

export class ConfigError extends Error {
  override name = "ConfigError";
}

const SECRET_KEYS = [
  "SECRET_ENCRYPTION_KEY",
  "SECRET_ENCRYPTION_KEYS_PREVIOUS",
  "SUMMARY_LLM_API_KEY",
  "DATABASE_URL",
  "DATABASE_READ_URL",
  ...DEPLOYMENT_SECRETS,
] as const;

/** Parses and validates the environment; throws a ConfigError naming the first bad variable. */
export function loadConfig(env: Record<string, string | undefined> = process.env): Config {
  const picked: Record<string, unknown> = {};
  for (const key of Object.keys(ConfigSchema.properties)) {
    const raw = env[key];
    if (raw === undefined) continue;
    // An empty variable means "unset" for numbers; for strings it is a value ("" = no allowlist).
    const isString = (ConfigSchema.properties as Record<string, { type?: string }>)[key].type === "string";
    if (raw !== "" || isString) picked[key] = raw;
  }
  const withDefaults = Value.Default(ConfigSchema, picked);
  const converted = Value.Convert(ConfigSchema, withDefaults) as Record<string, unknown>;
  const firstError = Value.Errors(ConfigSchema, converted).First();
  if (firstError) {
    const name = firstError.path.replace(/^\//, "") || "config";
    const shown =
      name in converted
        ? ` (got ${JSON.stringify(name.startsWith("DATABASE_") ? "<redacted>" : converted[name])})`
        : "";
    throw new ConfigError(`invalid ${name}: ${firstError.message}${shown}`);
  }
  const config = converted as Config;
  const keyBytes = decodeBase64(config.SECRET_ENCRYPTION_KEY);
  if (!keyBytes || keyBytes.length !== 32) {
    throw new ConfigError("invalid SECRET_ENCRYPTION_KEY: must be 32 bytes encoded as base64");
  }
  for (const previous of splitList(config.SECRET_ENCRYPTION_KEYS_PREVIOUS)) {
    if (decodeBase64(previous)?.length !== 32)
      throw new ConfigError("invalid SECRET_ENCRYPTION_KEYS_PREVIOUS: each key must be 32 bytes encoded as base64");
  }
  for (const name of ["WEBHOOK_INSECURE_ALLOWLIST", "TRUSTED_PROXIES"] as const) {
    for (const cidr of splitList(config[name])) {
      if (!/^[0-9a-fA-F:.]+\/\d{1,3}$/.test(cidr) || !isCidr(cidr))
        throw new ConfigError(`invalid ${name}: ${JSON.stringify(cidr)} is not a CIDR`);
    }
  }
  if (config.INGEST_PUBLIC_URL !== "") {
    try {
      config.INGEST_PUBLIC_URL = normalizeEndpoint(config.INGEST_PUBLIC_URL);
    } catch (err) {
      throw new ConfigError(`invalid INGEST_PUBLIC_URL: ${(err as Error).message}`);
    }
  }
  if (config.INGEST_PORT !== 0 && config.INGEST_PORT === config.PLATFORM_PORT) {
    throw new ConfigError("invalid PLATFORM_PORT: must differ from INGEST_PORT");
  }
  const grpcPort = config.INGEST_GRPC_PORT;
  if (grpcPort !== "off" && grpcPort !== 0 && (grpcPort === config.INGEST_PORT || grpcPort === config.PLATFORM_PORT)) {
    throw new ConfigError("invalid INGEST_GRPC_PORT: must differ from INGEST_PORT and PLATFORM_PORT");
  }
  const [cert, key] = [config.INGEST_GRPC_TLS_CERT_FILE, config.INGEST_GRPC_TLS_KEY_FILE];
  if (Boolean(cert) !== Boolean(key))
    throw new ConfigError(
      `invalid ${cert ? "INGEST_GRPC_TLS_KEY_FILE" : "INGEST_GRPC_TLS_CERT_FILE"}: certificate and key go together`,
    );
  for (const name of ["INGEST_GRPC_TLS_CERT_FILE", "INGEST_GRPC_TLS_KEY_FILE"] as const)
    if (config[name] && !existsSync(config[name]))
      throw new ConfigError(`invalid ${name}: no file at ${JSON.stringify(config[name])}`);
  // Deno 2.9's node:http2 cannot serve grpc-js over TLS (handshakes fail; denoland/deno#23714).
  if (cert && typeof (globalThis as { Deno?: unknown }).Deno !== "undefined")
    throw new ConfigError(
      "invalid INGEST_GRPC_TLS_CERT_FILE: TLS on the OTLP/gRPC listener is not available under Deno; terminate TLS at a proxy in front (docs/otlp.md) or run ingest on Bun",
    );
  const problem = checkDeploymentSettings(config);
  if (problem) throw new ConfigError(problem);
  return config;
}

/** The config with secrets masked, safe to log. */
export function redactConfig(config: Config): Record<string, unknown> {
  const copy: Record<string, unknown> = { ...config };
  for (const key of SECRET_KEYS) if (copy[key]) copy[key] = "<redacted>";
  return copy;
}

export function splitList(value: string): string[] {
  return value
    .split(",")
    .map((s) => s.trim())
    .filter(Boolean);
}

function decodeBase64(value: string): Uint8Array | null {
  try {
    const bin = atob(value);
    return Uint8Array.from(bin, (c) => c.charCodeAt(0));
  } catch {
    return null;
  }
}
