/**
 * The corpus score, per set: the development set (detectors are tuned on it) and the held-out
 * set (they are not; CONTRIBUTING.md, "the analysis corpus"). Precision and recall per detector,
 * and for `prompt_injection` per class of injection (clean look-alikes as `clean:<kind>`).
 */
export type Counts = { tp: number; fp: number; fn: number };

export interface SessionScore {
  sessionId: string;
  kind: string;
  channel: "raw" | "otlp";
  language: string | null;
  set: "dev" | "heldout";
  injectionClass: string | null;
  /** Held-out batch (`CorpusSession.source`). */
  source: string | null;
  /** Over all detectors, and per detector. */
  findings: Counts;
  byDetector: Record<string, Counts>;
  falsePositives: string[];
  falseNegatives: string[];
  transcriptMatch: boolean;
  costMatch: boolean;
  maturationCount: number;
  diff?: string;
}

export interface DetectorScore extends Counts {
  precision: number;
  recall: number;
}
export interface SetScore {
  total: number;
  transcriptExact: number;
  costExact: number;
  detectors: Record<string, DetectorScore>;
  /** `prompt_injection` per class (sessions of each class, their findings). */
  classes: Record<string, DetectorScore & { sessions: number }>;
  falsePositives: string[];
  falseNegatives: string[];
  sessions: SessionScore[];
}
/** The development set's figures at the top (what the corpus test holds), the held-out set's beside. */
export interface ScoreReport extends SetScore {
  heldout: SetScore;
  ms: number;
}

const rate = (n: number, d: number) => (d === 0 ? 1 : n / d);
const withRates = (c: Counts): DetectorScore => ({
  ...c,
  precision: rate(c.tp, c.tp + c.fp),
  recall: rate(c.tp, c.tp + c.fn),
});
const add = (a: Counts, b: Counts): Counts => ({ tp: a.tp + b.tp, fp: a.fp + b.fp, fn: a.fn + b.fn });
const zero = (): Counts => ({ tp: 0, fp: 0, fn: 0 });

function scoreSet(sessions: SessionScore[]): SetScore {
  const detectors: Record<string, Counts> = {};
  const classes: Record<string, Counts & { sessions: number }> = {};
  for (const s of sessions) {
    for (const [d, c] of Object.entries(s.byDetector)) detectors[d] = add(detectors[d] ?? zero(), c);
    if (s.injectionClass) {
      const c = classes[s.injectionClass] ?? { ...zero(), sessions: 0 };
      classes[s.injectionClass] = { ...add(c, s.byDetector.prompt_injection ?? zero()), sessions: c.sessions + 1 };
    }
  }
  return {
    total: sessions.length,
    transcriptExact: sessions.filter((s) => s.transcriptMatch).length,
    costExact: sessions.filter((s) => s.costMatch).length,
    detectors: Object.fromEntries(Object.entries(detectors).map(([d, c]) => [d, withRates(c)])),
    classes: Object.fromEntries(
      Object.entries(classes)
        .sort((a, b) => a[0].localeCompare(b[0]))
        .map(([k, c]) => [k, { ...withRates(c), sessions: c.sessions }]),
    ),
    falsePositives: sessions.flatMap((s) => s.falsePositives),
    falseNegatives: sessions.flatMap((s) => s.falseNegatives),
    sessions,
  };
}

export function summarize(sessions: SessionScore[], ms: number): ScoreReport {
  return {
    ...scoreSet(sessions.filter((s) => s.set === "dev")),
    heldout: scoreSet(sessions.filter((s) => s.set === "heldout")),
    ms,
  };
}

const pct = (n: number, d: number) => (d === 0 ? "    -" : (n / d).toFixed(3).padStart(5));

/** Sessions, exact transcripts and costs, and findings (all detectors) per channel or language. */
function breakdown(sessions: SessionScore[], by: (s: SessionScore) => string | null, title: string): string[] {
  const groups = new Map<string, SessionScore[]>();
  for (const s of sessions) {
    const key = by(s);
    if (key !== null) groups.set(key, [...(groups.get(key) ?? []), s]);
  }
  const lines = [`${title.padEnd(10)} sessions  transcript  cost   tp  fp  fn  precision  recall`];
  for (const [key, list] of [...groups].sort((a, b) => a[0].localeCompare(b[0]))) {
    const c = list.reduce((acc, s) => add(acc, s.findings), zero());
    lines.push(
      `${key.padEnd(10)} ${String(list.length).padStart(8)}  ${`${list.filter((s) => s.transcriptMatch).length}/${list.length}`.padStart(10)}  ${`${list.filter((s) => s.costMatch).length}/${list.length}`.padStart(5)} ${String(c.tp).padStart(4)} ${String(c.fp).padStart(3)} ${String(c.fn).padStart(3)}  ${pct(c.tp, c.tp + c.fp).padStart(9)}  ${pct(c.tp, c.tp + c.fn).padStart(6)}`,
    );
  }
  return lines;
}

const row = (name: string, c: DetectorScore, width = 22) =>
  `${name.padEnd(width)} ${String(c.tp).padStart(3)} ${String(c.fp).padStart(3)} ${String(c.fn).padStart(3)}  ${c.precision.toFixed(3).padStart(9)}  ${c.recall.toFixed(3).padStart(6)}`;

/** `prompt_injection` per held-out batch (sessions with a `source`): injections found, clean ones flagged. */
function sourceLines(sessions: SessionScore[]): string[] {
  const groups = new Map<string, Counts & { sessions: number }>();
  for (const s of sessions) {
    if (!s.source || !s.injectionClass) continue;
    const c = groups.get(s.source) ?? { ...zero(), sessions: 0 };
    groups.set(s.source, { ...add(c, s.byDetector.prompt_injection ?? zero()), sessions: c.sessions + 1 });
  }
  if (groups.size === 0) return [];
  return [
    "",
    "prompt_injection by source     sessions  tp  fp  fn  precision  recall",
    ...[...groups]
      .sort((a, b) => a[0].localeCompare(b[0]))
      .map(([k, c]) => `${k.padEnd(30)} ${String(c.sessions).padStart(8)} ${row("", withRates(c), 0).trimStart()}`),
  ];
}

function formatSet(title: string, r: SetScore): string[] {
  return [
    `== ${title}: ${r.total} sessions`,
    `transcript exact-match: ${r.transcriptExact}/${r.total}`,
    `cost exact-match:       ${r.costExact}/${r.total}`,
    "detector               tp  fp  fn  precision  recall",
    ...Object.entries(r.detectors).map(([d, c]) => row(d, c)),
    "",
    "prompt_injection by class      sessions  tp  fp  fn  precision  recall",
    ...Object.entries(r.classes).map(
      ([k, c]) => `${k.padEnd(30)} ${String(c.sessions).padStart(8)} ${row("", c, 0).trimStart().padStart(0)}`,
    ),
    "",
    ...breakdown(r.sessions, (s) => s.channel, "channel"),
    "",
    ...breakdown(r.sessions, (s) => s.language, "language"),
    ...sourceLines(r.sessions),
    ...r.sessions.filter((s) => !s.transcriptMatch || !s.costMatch).map((s) => `MISMATCH ${s.sessionId}: ${s.diff}`),
    ...r.falsePositives.map((f) => `FALSE POSITIVE ${f}`),
    ...r.falseNegatives.map((f) => `MISSED ${f}`),
  ];
}

export function formatReport(r: ScoreReport): string {
  return [
    `corpus: ${r.total + r.heldout.total} sessions replayed through ingest -> processor -> platform in ${(r.ms / 1000).toFixed(1)} s`,
    "",
    ...formatSet("development set (detectors are tuned on it)", r),
    ...(r.heldout.total === 0
      ? ["", "held-out set: not run (--development)"]
      : ["", ...formatSet("held-out set (not tuned against: test/corpus/heldout/)", r.heldout)]),
  ].join("\n");
}
