/**
 * Display helpers: one place for how times, money and durations read. The Intl formatters are
 * built once: `toLocaleString(undefined, options)` builds one per call, which made a 1,000-item
 * transcript take seconds to render (bench/dashboard.ts).
 */
const DATE_TIME = new Intl.DateTimeFormat(undefined, {
  year: "numeric",
  month: "short",
  day: "numeric",
  hour: "2-digit",
  minute: "2-digit",
  second: "2-digit",
});
const NUMBER = new Intl.NumberFormat();

export function when(iso: string | null | undefined): string {
  if (!iso) return "—";
  return DATE_TIME.format(new Date(iso));
}

/** Small amounts keep 2 significant digits (never exponents): a call of a cheap model costs $0.0000020. */
const SMALL_USD = new Intl.NumberFormat("en-US", { maximumSignificantDigits: 2, useGrouping: false });

export function usd(v: number | null | undefined): string {
  if (v === null || v === undefined) return "—";
  if (v === 0) return "$0";
  return Math.abs(v) < 0.01 ? `$${SMALL_USD.format(v)}` : `$${v.toFixed(4)}`;
}

export function ms(v: number | null | undefined): string {
  if (v === null || v === undefined) return "—";
  if (v < 1000) return `${Math.round(v)} ms`;
  if (v < 60_000) return `${(v / 1000).toFixed(1)} s`;
  return `${(v / 60_000).toFixed(1)} min`;
}

export function num(v: number | null | undefined): string {
  return v === null || v === undefined ? "—" : NUMBER.format(v);
}

/** Content as text: strings as they are, anything else as indented JSON. */
export function text(content: unknown): string {
  if (content === null || content === undefined) return "";
  if (typeof content === "string") return content;
  if (Array.isArray(content) && content.every((p) => p && typeof p === "object" && typeof p.text === "string")) {
    return content.map((p) => p.text).join("\n");
  }
  return JSON.stringify(content, null, 2);
}

/** Tool arguments are JSON in a string: shown indented when they parse. */
export function prettyJson(s: unknown): string {
  if (typeof s !== "string") return text(s);
  try {
    return JSON.stringify(JSON.parse(s), null, 2);
  } catch {
    return s;
  }
}
