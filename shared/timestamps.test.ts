import { expect, test } from "bun:test";
import { formatInstant, normalizeInstant, parseInstant } from "./timestamps.ts";

const reason = (v: string) => {
  const p = parseInstant(v);
  return p.ok ? null : p.reason;
};

test("offsets up to ±23:59 are accepted and folded into a UTC instant (Postgres parses only ±15:59)", () => {
  expect(normalizeInstant("2026-11-23T10:00:00+23:00")).toBe("2026-11-22T11:00:00.000Z");
  expect(normalizeInstant("2026-11-23T10:00:00+16:00")).toBe("2026-11-22T18:00:00.000Z");
  expect(normalizeInstant("2026-11-23T10:00:00-23:59")).toBe("2026-11-24T09:59:00.000Z");
  expect(normalizeInstant("2026-11-23T10:00:00+0530")).toBe("2026-11-23T04:30:00.000Z");
  expect(reason("2026-11-23T10:00:00+24:00")).toContain("offset");
  expect(reason("2026-11-23T10:00:00+05:60")).toContain("offset");
});

test("the instant must lie in the years 0100-9999 UTC (what Postgres and Bun's Date both read back)", () => {
  expect(reason("0000-01-01T00:00:00Z")).toContain("0100-9999");
  expect(reason("0001-01-01T00:00:00Z")).toContain("0100-9999");
  expect(reason("0099-12-31T23:59:59.999999Z")).toContain("0100-9999");
  expect(normalizeInstant("0100-01-01T00:00:00Z")).toBe("0100-01-01T00:00:00.000Z");
  expect(reason("0100-01-01T00:00:00+00:01")).toContain("0100-9999");
  expect(normalizeInstant("9999-12-31T23:59:59.999999Z")).toBe("9999-12-31T23:59:59.999999Z");
  expect(reason("9999-12-31T23:59:59-00:01")).toContain("0100-9999");
  expect(normalizeInstant("0099-12-31T23:00:00-02:00")).toBe("0100-01-01T01:00:00.000Z");
});

test("a leap second is the first instant of the next minute; 24:00:00 is the end of the day", () => {
  expect(normalizeInstant("2016-12-31T23:59:60Z")).toBe("2017-01-01T00:00:00.000Z");
  expect(normalizeInstant("2016-12-31T23:59:60.5Z")).toBe("2017-01-01T00:00:00.500Z");
  expect(normalizeInstant("2026-02-28T24:00:00Z")).toBe("2026-03-01T00:00:00.000Z");
  expect(normalizeInstant("2026-02-28T24:00:00.000Z")).toBe("2026-03-01T00:00:00.000Z");
  expect(reason("2026-02-28T24:00:01Z")).toContain("time of day");
  expect(reason("2026-02-28T24:00:00.001Z")).toContain("time of day");
  expect(reason("2026-02-28T23:59:61Z")).toContain("time of day");
  expect(reason("2026-02-28T23:60:00Z")).toContain("time of day");
});

test("fractions keep microseconds and truncate beyond, never rounding up", () => {
  expect(normalizeInstant("2026-01-01T00:00:00.123456789Z")).toBe("2026-01-01T00:00:00.123456Z");
  expect(normalizeInstant("2026-01-01T00:00:00.9999999Z")).toBe("2026-01-01T00:00:00.999999Z");
  expect(normalizeInstant("2026-01-01T00:00:00.5Z")).toBe("2026-01-01T00:00:00.500Z");
  expect(normalizeInstant("2026-01-01T00:00:00.000100Z")).toBe("2026-01-01T00:00:00.000100Z");
  expect(reason("2026-01-01T00:00:00.1234567890Z")).not.toBeNull();
});

test("calendar dates are real, the zone is required, and normalising twice changes nothing", () => {
  expect(reason("2025-02-29T00:00:00Z")).toContain("calendar date");
  expect(normalizeInstant("2024-02-29T00:00:00Z")).toBe("2024-02-29T00:00:00.000Z");
  expect(reason("2025-04-31T00:00:00Z")).toContain("calendar date");
  expect(reason("2025-03-01T10:00:00")).toContain("time zone");
  expect(reason("2025-03-01 10:00:00Z")).toContain("time zone");
  expect(normalizeInstant("2025-03-01t10:00z")).toBe("2025-03-01T10:00:00.000Z");
  for (const v of ["2026-11-23T10:00:00+23:00", "1999-12-31T23:59:60.123456789-07:00", "0100-01-01T00:00:00Z"]) {
    const once = normalizeInstant(v)!;
    expect(normalizeInstant(once)).toBe(once);
  }
});

test("the UTC form agrees with Date for every millisecond instant it can represent", () => {
  for (let i = 0; i < 2000; i++) {
    const ms = Math.floor((Math.random() * 2 - 1) * 8.6e15) % 253402300800000;
    const d = new Date(ms);
    if (d.getUTCFullYear() < 100 || d.getUTCFullYear() > 9999) continue;
    const seconds = Math.floor(ms / 1000);
    expect(formatInstant(seconds, (ms - seconds * 1000) * 1000)).toBe(d.toISOString());
    expect(normalizeInstant(d.toISOString())).toBe(d.toISOString());
  }
});
