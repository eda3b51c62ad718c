/**
 * Client timestamps, parsed by hand into UTC instants that Postgres `timestamptz` stores exactly
 * (docs/ingestion.md, "Timestamps"). Decisions where ISO 8601 / RFC 3339 and Postgres differ:
 * - an offset or Z is required; offsets up to ±23:59 (RFC 3339) are accepted: the value is
 *   normalised to UTC here, so Postgres (which parses offsets only up to ±15:59) never sees one;
 * - the instant must fall in 0100-01-01T00:00:00Z .. 9999-12-31T23:59:59.999999Z: Postgres goes
 *   further, but Bun's Date (which postgres.js parses timestamptz with) reads Postgres' text form
 *   of years 0001-0099 as 19xx/20xx or Invalid Date (measured, every year 1-99): a stored 0050
 *   would come back as 1950, or fail the processor's write;
 * - a leap second `:60` is the first instant of the next minute (what Postgres does);
 * - `24:00:00` (any zero fraction) is midnight at the end of that day; `24:00:01` is invalid;
 * - fractional digits beyond microseconds (up to 9) are truncated, never rounded up;
 * - seconds may be omitted (`12:00Z`); the offset colon may be omitted (`+0530`).
 * The normalised form is `YYYY-MM-DDTHH:MM:SS.sssZ` (as `Date.toISOString()`), or with six
 * fractional digits when the value has microseconds.
 */
const PATTERN =
  /^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,9}))?)?(?:([Zz])|([+-])(\d{2}):?(\d{2}))$/;

/** The TypeBox format name of a client timestamp. Our own name: Elysia registers its own `date-time`. */
export const INSTANT_FORMAT = "cellar-instant";

const SECONDS_PER_DAY = 86_400;
/** 0100-01-01T00:00:00Z and 9999-12-31T23:59:59Z in seconds since the epoch. */
const MIN_SECONDS = daysFromCivil(100, 1, 1) * SECONDS_PER_DAY;
const MAX_SECONDS = daysFromCivil(9999, 12, 31) * SECONDS_PER_DAY + SECONDS_PER_DAY - 1;

export type ParsedInstant = { ok: true; seconds: number; micros: number; iso: string } | { ok: false; reason: string };

/** Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's days_from_civil). */
function daysFromCivil(y: number, m: number, d: number): number {
  y -= m <= 2 ? 1 : 0;
  const era = Math.floor(y / 400);
  const yoe = y - era * 400;
  const doy = Math.floor((153 * (m + (m > 2 ? -3 : 9)) + 2) / 5) + d - 1;
  const doe = yoe * 365 + Math.floor(yoe / 4) - Math.floor(yoe / 100) + doy;
  return era * 146097 + doe - 719468;
}

function civilFromDays(z: number): [number, number, number] {
  z += 719468;
  const era = Math.floor(z / 146097);
  const doe = z - era * 146097;
  const yoe = Math.floor((doe - Math.floor(doe / 1460) + Math.floor(doe / 36524) - Math.floor(doe / 146096)) / 365);
  const doy = doe - (365 * yoe + Math.floor(yoe / 4) - Math.floor(yoe / 100));
  const mp = Math.floor((5 * doy + 2) / 153);
  const d = doy - Math.floor((153 * mp + 2) / 5) + 1;
  const m = mp + (mp < 10 ? 3 : -9);
  return [era * 400 + yoe + (m <= 2 ? 1 : 0), m, d];
}

const daysInMonth = (y: number, m: number) =>
  m === 2
    ? y % 4 === 0 && (y % 100 !== 0 || y % 400 === 0)
      ? 29
      : 28
    : [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31][m - 1];
const pad = (n: number, w: number) => String(n).padStart(w, "0");

/** The canonical UTC text of an instant (seconds since the epoch + microseconds). */
export function formatInstant(seconds: number, micros: number): string {
  const days = Math.floor(seconds / SECONDS_PER_DAY);
  const rest = seconds - days * SECONDS_PER_DAY;
  const [y, m, d] = civilFromDays(days);
  const frac = micros % 1000 === 0 ? pad(micros / 1000, 3) : pad(micros, 6);
  return `${pad(y, 4)}-${pad(m, 2)}-${pad(d, 2)}T${pad(Math.floor(rest / 3600), 2)}:${pad(Math.floor((rest % 3600) / 60), 2)}:${pad(rest % 60, 2)}.${frac}Z`;
}

/** Parses a client timestamp; `reason` says what is wrong in words a client can act on. */
export function parseInstant(value: string): ParsedInstant {
  return parseCanonical(value) ?? parseAnyForm(value);
}

/** The value of decimal digits value[from..to), or -1 when one is not a digit. */
function digits(value: string, from: number, to: number): number {
  let n = 0;
  for (let i = from; i < to; i++) {
    const c = value.charCodeAt(i) - 48;
    if (c < 0 || c > 9) return -1;
    n = n * 10 + c;
  }
  return n;
}

/**
 * A value already in the canonical form (`YYYY-MM-DDTHH:MM:SS.sssZ`, or six fractional digits
 * that are not a whole millisecond), which is what formatInstant gives back: parsed without the
 * regex's match or a new text, the value itself is its canonical text. Each value is parsed
 * several times on its way (the door, the message's rules, the processor), most already canonical.
 * Anything else, or anything out of range, is left to parseAnyForm (null), so its answer and its
 * reason are the one path's (timestamps.test.ts checks the two agree).
 */
function parseCanonical(value: string): ParsedInstant | null {
  const length = value.length;
  if (length !== 24 && length !== 27) return null;
  if (
    value.charCodeAt(4) !== 45 || // -
    value.charCodeAt(7) !== 45 ||
    value.charCodeAt(10) !== 84 || // T
    value.charCodeAt(13) !== 58 || // :
    value.charCodeAt(16) !== 58 ||
    value.charCodeAt(19) !== 46 || // .
    value.charCodeAt(length - 1) !== 90 // Z
  )
    return null;
  const y = digits(value, 0, 4);
  const mo = digits(value, 5, 7);
  const d = digits(value, 8, 10);
  const h = digits(value, 11, 13);
  const mi = digits(value, 14, 16);
  const s = digits(value, 17, 19);
  const fraction = digits(value, 20, length - 1);
  if (y < 100 || mo < 1 || mo > 12 || d < 1 || h < 0 || h > 23 || mi < 0 || mi > 59 || s < 0 || s > 59) return null;
  if (fraction < 0 || d > daysInMonth(y, mo)) return null;
  const micros = length === 24 ? fraction * 1000 : fraction;
  if (length === 27 && micros % 1000 === 0) return null;
  const seconds = daysFromCivil(y, mo, d) * SECONDS_PER_DAY + h * 3600 + mi * 60 + s;
  return { ok: true, seconds, micros, iso: value };
}

function parseAnyForm(value: string): ParsedInstant {
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

/** The canonical UTC form, or null when the value is not an accepted timestamp. */
export function normalizeInstant(value: string): string | null {
  const p = parseInstant(value);
  return p.ok ? p.iso : null;
}
