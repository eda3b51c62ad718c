import { createHash } from "node:crypto";

/** The id schemes the sampling property is checked over (both SDKs' agreement test uses them too). */
export const SAMPLING_RATES = [0.01, 0.1, 0.25, 0.5, 0.9];

const hex = (n: number, width: number) => n.toString(16).padStart(width, "0");

export function samplingSchemes(n: number): Record<string, string[]> {
  const range = (f: (i: number) => string) => Array.from({ length: n }, (_, i) => f(i));
  // Random-looking v4 UUIDs, the same on every run: the SHA-256 of a counter.
  const uuid4 = (i: number) => {
    const a = createHash("sha256").update(`uuid-${i}`).digest("hex");
    return `${a.slice(0, 8)}-${a.slice(8, 12)}-4${a.slice(13, 16)}-a${a.slice(17, 20)}-${a.slice(20, 32)}`;
  };
  const t0 = Date.UTC(2026, 10, 28);
  return {
    "conv-N": range((i) => `conv-${i}`),
    N: range((i) => String(i)),
    session_000N: range((i) => `session_${String(i).padStart(6, "0")}`),
    "uuid v4": range(uuid4),
    "uuid sequential": range((i) => `00000000-0000-4000-8000-${hex(i, 12)}`),
    "e-mail": range((i) => `user${i}@example.com`),
    "iso timestamp (1 s)": range((i) => new Date(t0 + i * 1000).toISOString()),
    "epoch ms (1 ms)": range((i) => String(t0 + i)),
    "tenant/user/N": range((i) => `t${i % 7}/u${i % 13}/${Math.floor(i / 91)}`),
  };
}
