import { expect, test } from "bun:test";
import fc from "fast-check";
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

/** parseInstant before its canonical-form fast path (issue 41 part 4), verbatim: the oracle. */
function oldParseInstant(value: string) {
  const PATTERN =
    /^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,9}))?)?(?:([Zz])|([+-])(\d{2}):?(\d{2}))$/;
  const SECONDS_PER_DAY = 86_400;
  const daysFromCivil = (yy: number, m: number, d: number) => {
    const y = yy - (m <= 2 ? 1 : 0);
    const era = Math.floor(y / 400);
    const yoe = y - era * 400;
    const doy = Math.floor((153 * (m + (m > 2 ? -3 : 9)) + 2) / 5) + d - 1;
    const doe = yoe * 365 + Math.floor(yoe / 4) - Math.floor(yoe / 100) + doy;
    return era * 146097 + doe - 719468;
  };
  const MIN_SECONDS = daysFromCivil(100, 1, 1) * SECONDS_PER_DAY;
  const MAX_SECONDS = daysFromCivil(9999, 12, 31) * SECONDS_PER_DAY + SECONDS_PER_DAY - 1;
  const daysInMonth = (y: number, m: number) =>
    m === 2
      ? y % 4 === 0 && (y % 100 !== 0 || y % 400 === 0)
        ? 29
        : 28
      : [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31][m - 1];
  const m = value.length <= 64 ? PATTERN.exec(value) : null;
  if (!m) return { ok: false, reason: "must be an ISO 8601 date-time with a time zone, e.g. 2025-01-31T12:00:00.000Z" };
  const [y, mo, d, h, mi] = [m[1], m[2], m[3], m[4], m[5]].map(Number);
  const s = m[6] === undefined ? 0 : Number(m[6]);
  const fraction = m[7] ?? "";
  const micros = fraction ? Number(fraction.slice(0, 6).padEnd(6, "0")) : 0;
  if (mo < 1 || mo > 12 || d < 1 || d > daysInMonth(y, mo)) return { ok: false, reason: "is not a calendar date" };
  if (h === 24 ? mi !== 0 || s !== 0 || /[1-9]/.test(fraction) : h > 23 || mi > 59 || s > 60)
    return { ok: false, reason: "is not a time of day (hours 00-23 or 24:00:00, minutes 00-59, seconds 00-60)" };
  let offset = 0;
  if (!m[8]) {
    const oh = Number(m[10]);
    const om = Number(m[11]);
    if (oh > 23 || om > 59) return { ok: false, reason: "has an offset beyond ±23:59" };
    offset = (m[9] === "-" ? -1 : 1) * (oh * 3600 + om * 60);
  }
  const seconds = daysFromCivil(y, mo, d) * SECONDS_PER_DAY + h * 3600 + mi * 60 + s - offset;
  if (seconds < MIN_SECONDS || seconds > MAX_SECONDS)
    return { ok: false, reason: "is outside the years 0100-9999 (UTC)" };
  return { ok: true, seconds, micros, iso: formatInstant(seconds, micros) };
}

test("parseInstant answers as it did before its canonical-form fast path: generated and edited timestamps", () => {
  const pad = (n: number, w: number) => String(n).padStart(w, "0");
  // Near-canonical values: every field over and past its range, a few characters swapped.
  const nearCanonical = fc
    .record({
      y: fc.integer({ min: 0, max: 9999 }),
      mo: fc.integer({ min: 0, max: 13 }),
      d: fc.integer({ min: 0, max: 32 }),
      h: fc.integer({ min: 0, max: 25 }),
      mi: fc.integer({ min: 0, max: 61 }),
      s: fc.integer({ min: 0, max: 61 }),
      frac: fc.oneof(
        fc.integer({ min: 0, max: 999 }).map((n) => pad(n, 3)),
        fc.integer({ min: 0, max: 999_999 }).map((n) => pad(n, 6)),
      ),
      edit: fc.option(
        fc.tuple(fc.nat(30), fc.constantFrom("t", "z", "x", " ", "+", "-", ":", ".", "0", "9", "٣", "")),
        { nil: undefined },
      ),
    })
    .map(({ y, mo, d, h, mi, s, frac, edit }) => {
      const v = `${pad(y, 4)}-${pad(mo, 2)}-${pad(d, 2)}T${pad(h, 2)}:${pad(mi, 2)}:${pad(s, 2)}.${frac}Z`;
      if (!edit) return v;
      const at = edit[0] % (v.length + 1);
      return v.slice(0, at) + edit[1] + v.slice(at + 1);
    });
  const fromDates = fc
    .date({ min: new Date("0050-01-01T00:00:00Z"), max: new Date("9999-12-31T23:59:59Z"), noInvalidDate: true })
    .map((d) => d.toISOString());
  fc.assert(
    fc.property(fc.oneof(nearCanonical, fromDates, fc.string({ maxLength: 30 })), (v) => {
      expect(parseInstant(v)).toEqual(oldParseInstant(v) as never);
    }),
    { numRuns: 20_000 },
  );
  for (const v of [
    "2024-02-29T23:59:59.999Z",
    "2023-02-29T00:00:00.000Z",
    "0100-01-01T00:00:00.000Z",
    "0099-12-31T23:59:59.999Z",
    "9999-12-31T23:59:59.999999Z",
    "2026-01-01T24:00:00.000Z",
    "2026-01-01T23:59:60.000Z",
    "2026-01-01T00:00:00.123000Z",
    "2026-01-01T00:00:00.123456Z",
    "2026-01-01t00:00:00.000Z",
    "2026-01-01T00:00:00.000z",
    "+002026-01-01T00:00:00.000Z",
  ])
    expect(parseInstant(v)).toEqual(oldParseInstant(v) as never);
});
