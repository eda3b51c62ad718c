import { expect, spyOn, test } from "bun:test";
import { createLogger, redactUrlCredentials } from "./logger.ts";

test("a URL's userinfo never reaches a log line, whatever field carries it", () => {
  const spy = spyOn(console, "error").mockImplementation(() => {});
  try {
    createLogger("info").info("starting", {
      config: { NATS_URL: "nats://app:s3cret@nats-1:4222,tls://tok@nats-2:4222" },
      err: new Error("connect ECONNREFUSED postgres://cellar:pw@db:5432/cellar"),
    });
    const line = String(spy.mock.calls[0][0]);
    expect(line).not.toContain("s3cret");
    expect(line).not.toContain("tok@");
    expect(line).not.toContain(":pw@");
    expect(line).toContain("nats://<redacted>@nats-1:4222");
    expect(JSON.parse(line).config.NATS_URL).toBe("nats://<redacted>@nats-1:4222,tls://<redacted>@nats-2:4222");
  } finally {
    spy.mockRestore();
  }
});

test("URLs without credentials and e-mail addresses are left alone", () => {
  expect(redactUrlCredentials("https://example.com/a?b=c@d")).toBe("https://example.com/a?b=c@d");
  expect(redactUrlCredentials("owner@acme.test")).toBe("owner@acme.test");
});
