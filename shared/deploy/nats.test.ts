import { expect, test } from "bun:test";
import { describeConnectError, natsClientOptions } from "./nats.ts";
import { checkDeploymentSettings } from "./settings.ts";

const base = {
  NATS_URL: "nats://n:4222",
  NATS_USER: "",
  NATS_PASSWORD: "",
  NATS_TLS_CA_FILE: "",
  NATS_TLS_CERT_FILE: "",
  NATS_TLS_KEY_FILE: "",
};

test("a user gets its credentials and its own reply-inbox prefix; no user, no credentials", () => {
  expect(natsClientOptions(base)).toEqual({});
  expect(natsClientOptions({ ...base, NATS_USER: "ingest", NATS_PASSWORD: "pw" })).toEqual({
    user: "ingest",
    pass: "pw",
    inboxPrefix: "_INBOX.ingest",
  });
  expect(natsClientOptions({ ...base, NATS_TLS_CA_FILE: "/ca.pem" })).toEqual({ tls: { caFile: "/ca.pem" } });
  expect(natsClientOptions({ ...base, NATS_TLS_CERT_FILE: "/c.pem", NATS_TLS_KEY_FILE: "/k.pem" }).tls).toEqual({
    certFile: "/c.pem",
    keyFile: "/k.pem",
  });
});

test("connect errors name the user and the variables to check", () => {
  expect(describeConnectError(new Error("Authorization Violation"), { ...base, NATS_USER: "ingest" })).toContain(
    'refused user "ingest"',
  );
  expect(describeConnectError(new Error("Authorization Violation"), base)).toContain(
    "a connection without credentials",
  );
  expect(describeConnectError(new Error("self-signed certificate"), base)).toContain("NATS_TLS_CA_FILE");
  expect(describeConnectError(new Error("ECONNREFUSED"), base)).toBe(
    "cannot connect to NATS at nats://n:4222 as a connection without credentials: ECONNREFUSED",
  );
});

test("deployment settings: user and password together, cert and key together, files must exist", () => {
  const s = { ...base, DATABASE_TLS_CA_FILE: "" };
  expect(checkDeploymentSettings(s)).toBeUndefined();
  expect(checkDeploymentSettings({ ...s, NATS_PASSWORD: "x" })).toBe(
    "invalid NATS_USER: required when NATS_PASSWORD is set",
  );
  expect(checkDeploymentSettings({ ...s, NATS_USER: "x" })).toBe(
    "invalid NATS_PASSWORD: required when NATS_USER is set",
  );
  expect(checkDeploymentSettings({ ...s, NATS_TLS_CERT_FILE: import.meta.path })).toContain(
    "invalid NATS_TLS_KEY_FILE",
  );
  expect(checkDeploymentSettings({ ...s, DATABASE_TLS_CA_FILE: "/nope/ca.pem" })).toBe(
    'invalid DATABASE_TLS_CA_FILE: no file at "/nope/ca.pem"',
  );
});
