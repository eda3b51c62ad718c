import { expect, test } from "bun:test";
import { interpolate, Localizer, niceForCpuShares } from "./helpers/compose";

test("compose interpolation: defaults, required variables, $$", () => {
  const env = { A: "1", EMPTY: "" };
  expect(interpolate("${A}-${B:-two}-${EMPTY:-d}-${EMPTY-d}-$$A-$A", env)).toBe("1-two-d--$A-1");
  expect(() => interpolate("${B:?set B please}", env)).toThrow("required variable B is missing a value: set B please");
  expect(() => interpolate("${EMPTY:?empty}", env)).toThrow("EMPTY");
});

test("container hostnames and ports map to loopback without touching other numbers", () => {
  const l = new Localizer(
    ["nats", "postgres"],
    new Map([
      [4222, 41000],
      [3100, 41100],
    ]),
    [{ container: "/etc/nats", host: "/repo/deploy/nats" }],
  );
  expect(l.text("nats://nats:4222")).toBe("nats://127.0.0.1:41000");
  expect(l.text("fetch('http://127.0.0.1:3100/ready')")).toBe("fetch('http://127.0.0.1:41100/ready')");
  expect(l.text("/etc/nats/nats.conf")).toBe("/repo/deploy/nats/nats.conf");
  expect(l.env({ INGEST_PORT: "3100", MATURATION_WINDOW_SECONDS: "4222", X: "nats:42220" })).toEqual({
    INGEST_PORT: "41100",
    MATURATION_WINDOW_SECONDS: "4222",
    X: "nats:42220",
  });
});

test("cpu_shares run as the nice level of the nearest kernel weight; the default and above stay at 0", () => {
  const cases = [undefined, 1024, 4096, 900, 820, 128, 110, 100, 87, 2];
  expect(cases.map((shares) => [shares, niceForCpuShares(shares)])).toEqual([
    [undefined, 0],
    [1024, 0],
    [4096, 0],
    [900, 1],
    [820, 1],
    [128, 9],
    [110, 10],
    [100, 10],
    [87, 11],
    [2, 19],
  ]);
});
