import { describe, expect, test } from "bun:test";
import fc from "fast-check";
import { encodeDsn, normalizeEndpoint } from "@cellar/shared/auth/dsn";
import { generateKey, KeyResolver } from "@cellar/shared/auth/keys";
import { createApiKey, createTenant } from "@cellar/shared/admin/tenancy";
import { loadConfig } from "@cellar/shared/config";
import { parseDsn } from "../sdks/typescript/src/dsn";
import { runAdmin } from "./helpers/admin-cli";
import { useTestDatabase } from "./helpers/test-database";

// The server mints DSNs (shared/auth/dsn.ts), the SDK reads them (sdks/typescript/src/dsn.ts):
// two implementations of docs/sdks.md that must agree on every input.

const endpoints = fc
  .webUrl({ withQueryParameters: false, withFragments: false })
  .filter((u) => u.length <= 150 && !/@/.test(u));
const services = fc.string({ unit: "grapheme", minLength: 1, maxLength: 60 });
const secrets = fc.string({ unit: fc.constantFrom(..."abcXYZ019-_"), minLength: 32, maxLength: 32 });

describe("DSN format: the server's encoder and the SDK's parser agree", () => {
  test("every generated endpoint and service comes back as minted", () => {
    fc.assert(
      fc.property(endpoints, services, secrets, fc.boolean(), (endpoint, serviceName, secret, server) => {
        const prefix = server ? "svc-ing-s-" : "svc-ing-c-";
        const dsn = encodeDsn(prefix, { endpoint, serviceName }, secret);
        expect(dsn).toMatch(/^svc-ing-[sc]-[A-Za-z0-9_-]+\.[A-Za-z0-9_-]{32}$/);
        expect(parseDsn(dsn)).toEqual({
          kind: server ? "server" : "client",
          endpoint: normalizeEndpoint(endpoint),
          serviceName,
          legacy: false,
        });
      }),
      { numRuns: 500 },
    );
  });

  test("a legacy DSN (no '.') parses without endpoint or service", async () => {
    const { key } = await generateKey("dsn-server");
    expect(key).not.toContain(".");
    expect(parseDsn(key)).toEqual({ kind: "server", legacy: true });
  });

  test("endpoints are normalised: no trailing slash, query, fragment or credentials", () => {
    expect(normalizeEndpoint("https://ingest.example.com/")).toBe("https://ingest.example.com");
    expect(normalizeEndpoint("http://127.0.0.1:3100/cellar/ingest//")).toBe("http://127.0.0.1:3100/cellar/ingest");
    for (const bad of ["ftp://x", "https://a:b@x", "https://x/?q=1", "https://x/#f", "not a url"])
      expect(() => normalizeEndpoint(bad)).toThrow();
    expect(() => normalizeEndpoint(`https://x.example/${"a".repeat(200)}`)).toThrow("longer than 200");
  });

  test("the SDK's parser refuses what is not a DSN, with a message and never another exception", () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 300 }), (text) => {
        try {
          parseDsn(text);
        } catch (err) {
          expect((err as Error).name).toBe("DsnError");
        }
      }),
      { numRuns: 500 },
    );
    expect(() => parseDsn("cel_tk_abc")).toThrow("svc-ing-s-");
    expect(() => parseDsn("svc-ing-s-%%%.secret")).toThrow("base64url");
    const v2 = Buffer.from(JSON.stringify({ v: 2, e: "https://x", s: "s" })).toString("base64url");
    expect(() => parseDsn(`svc-ing-s-${v2}.secret`)).toThrow("version 2");
  });

  test("INGEST_PUBLIC_URL is validated and normalised by the config", () => {
    const base = { SECRET_ENCRYPTION_KEY: Buffer.alloc(32, 7).toString("base64") };
    expect(loadConfig(base).INGEST_PUBLIC_URL).toBe("");
    expect(loadConfig({ ...base, INGEST_PUBLIC_URL: "https://ingest.acme.test/" }).INGEST_PUBLIC_URL).toBe(
      "https://ingest.acme.test",
    );
    expect(() => loadConfig({ ...base, INGEST_PUBLIC_URL: "ingest.acme.test" })).toThrow("invalid INGEST_PUBLIC_URL");
  });
});

describe("DSNs minted with an endpoint", () => {
  const testDb = useTestDatabase();

  test("resolve by the hash of the whole string; an edited config part is an unknown key", async () => {
    const tenant = await createTenant(testDb.database.db, { name: "dsn" });
    const minted = await createApiKey(testDb.database.db, {
      kind: "dsn-server",
      tenantId: tenant.id,
      serviceName: "bot",
      endpoint: "https://ingest.acme.test/",
    });
    expect(parseDsn(minted.key)).toMatchObject({ endpoint: "https://ingest.acme.test", serviceName: "bot" });
    const resolver = new KeyResolver(testDb.database.db, { ttlMs: 0 });
    expect(await resolver.resolve(minted.key)).toMatchObject({ kind: "dsn-server", serviceName: "bot" });
    const secret = minted.key.slice(minted.key.lastIndexOf(".") + 1);
    const edited = encodeDsn("svc-ing-s-", { endpoint: "https://ingest.acme.test", serviceName: "other" }, secret);
    expect(await resolver.resolve(edited)).toBeNull();
    const legacy = await createApiKey(testDb.database.db, {
      kind: "dsn-client",
      tenantId: tenant.id,
      serviceName: "bot",
    });
    expect(parseDsn(legacy.key).legacy).toBe(true);
    expect(await resolver.resolve(legacy.key)).toMatchObject({ kind: "dsn-client" });
  });

  test("the admin CLI mints from --endpoint, else INGEST_PUBLIC_URL, else a legacy DSN with a warning", async () => {
    const tenant = await createTenant(testDb.database.db, { name: "cli" });
    const create = (extra: string[], env: Record<string, string> = {}) =>
      runAdmin(["key", "create", "--tenant", tenant.id, "--kind", "dsn-server", "--service", "svc", ...extra], {
        databaseUrl: testDb.url,
        env: { INGEST_PUBLIC_URL: "", ...env },
      });
    const flagged = create(["--endpoint", "https://in.acme.test/"]);
    expect(flagged.code).toBe(0);
    expect(parseDsn(flagged.json.key)).toMatchObject({ endpoint: "https://in.acme.test", serviceName: "svc" });
    const fromEnv = create([], { INGEST_PUBLIC_URL: "http://10.0.0.5:3100" });
    expect(parseDsn(fromEnv.json.key)).toMatchObject({ endpoint: "http://10.0.0.5:3100" });
    const legacy = create([]);
    expect(legacy.code).toBe(0);
    expect(parseDsn(legacy.json.key).legacy).toBe(true);
    expect(legacy.stderr).toContain("legacy DSN");
    const bad = create(["--endpoint", "ftp://x"]);
    expect(bad.code).not.toBe(0);
    expect(bad.stderr).toContain("--endpoint");
  });
});
