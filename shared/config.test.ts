import { describe, expect, test } from "bun:test";
import { ConfigError, loadConfig, redactConfig } from "./config.ts";

const KEY = btoa(String.fromCharCode(...new Uint8Array(32).fill(7)));
const base = { SECRET_ENCRYPTION_KEY: KEY };

describe("loadConfig", () => {
  test("applies defaults and coerces numbers", () => {
    const c = loadConfig({ ...base, INGEST_PORT: "4000", WEBHOOK_RETRY_TIME_SCALE: "0.001" });
    expect(c.INGEST_PORT).toBe(4000);
    expect(c.PLATFORM_PORT).toBe(3200);
    expect(c.MATURATION_WINDOW_SECONDS).toBe(180);
    expect(c.WEBHOOK_RETRY_TIME_SCALE).toBe(0.001);
    expect(c.WEBHOOK_INSECURE_ALLOWLIST).toBe("");
  });

  test.each([
    [{ INGEST_PORT: "abc" }, "INGEST_PORT"],
    [{ INGEST_PORT: "70000" }, "INGEST_PORT"],
    [{ MATURATION_WINDOW_SECONDS: "0" }, "MATURATION_WINDOW_SECONDS"],
    [{ DATABASE_URL: "mysql://x" }, "DATABASE_URL"],
    [{ WEBHOOK_RETRY_TIME_SCALE: "-1" }, "WEBHOOK_RETRY_TIME_SCALE"],
    [{ WEBHOOK_INSECURE_ALLOWLIST: "10.0.0.0/8,not-a-cidr" }, "WEBHOOK_INSECURE_ALLOWLIST"],
    [{ WEBHOOK_INSECURE_ALLOWLIST: "10.0.0.0/33" }, "WEBHOOK_INSECURE_ALLOWLIST"],
    [{ TRUSTED_PROXIES: "10.0.0.0/8, proxy.internal" }, "TRUSTED_PROXIES"],
    [{ TRUSTED_PROXIES: "300.0.0.0/8" }, "TRUSTED_PROXIES"],
    [{ SECRET_ENCRYPTION_KEY: "c2hvcnQ=" }, "SECRET_ENCRYPTION_KEY"],
    [{ LOG_LEVEL: "loud" }, "LOG_LEVEL"],
    [{ INGEST_PORT: "3000", PLATFORM_PORT: "3000" }, "PLATFORM_PORT"],
    [{ INGEST_GRPC_PORT: "grpc" }, "INGEST_GRPC_PORT"],
    [{ INGEST_GRPC_PORT: "70000" }, "INGEST_GRPC_PORT"],
    [{ INGEST_GRPC_PORT: "3100" }, "INGEST_GRPC_PORT"],
    [{ INGEST_GRPC_TLS_CERT_FILE: "shared/config.ts" }, "INGEST_GRPC_TLS_KEY_FILE"],
    [{ INGEST_GRPC_TLS_KEY_FILE: "shared/config.ts" }, "INGEST_GRPC_TLS_CERT_FILE"],
    [
      { INGEST_GRPC_TLS_CERT_FILE: "/nonexistent.pem", INGEST_GRPC_TLS_KEY_FILE: "/nonexistent.key" },
      "INGEST_GRPC_TLS_CERT_FILE",
    ],
  ])("rejects %p naming %s", (env, variable) => {
    expect(() => loadConfig({ ...base, ...env })).toThrow(ConfigError);
    expect(() => loadConfig({ ...base, ...env })).toThrow(variable);
  });

  test("the gRPC port: 4317 by default, a number, 0 for any free port, or off", () => {
    expect(loadConfig(base).INGEST_GRPC_PORT).toBe(4317);
    expect(loadConfig({ ...base, INGEST_GRPC_PORT: "" }).INGEST_GRPC_PORT).toBe(4317);
    expect(loadConfig({ ...base, INGEST_GRPC_PORT: "14317" }).INGEST_GRPC_PORT).toBe(14317);
    expect(loadConfig({ ...base, INGEST_GRPC_PORT: "0", INGEST_PORT: "0" }).INGEST_GRPC_PORT).toBe(0);
    expect(loadConfig({ ...base, INGEST_GRPC_PORT: "off" }).INGEST_GRPC_PORT).toBe("off");
  });

  test("a missing encryption key is named", () => {
    expect(() => loadConfig({})).toThrow("SECRET_ENCRYPTION_KEY");
  });

  test("redactConfig hides secrets", () => {
    const shown = redactConfig(loadConfig({ ...base, SUMMARY_LLM_API_KEY: "sk-123" }));
    expect(JSON.stringify(shown)).not.toContain(KEY);
    expect(JSON.stringify(shown)).not.toContain("sk-123");
  });
});
