/**
 * How far to trust a judge (docs/evaluations.md, "Agreement"): on the sessions both a judge and a
 * reviewer scored, for booleans and labels the share of identical verdicts and Cohen's kappa
 * (agreement beyond what the two raters' own rates would give by chance); for numbers the mean
 * absolute difference. Pure.
 */
export interface Agreement {
  pairs: number;
  agreementRate: number | null;
  kappa: number | null;
  meanAbsoluteDifference: number | null;
}

/** Verdict pairs of a boolean or label evaluator: `[judge, reviewer]`. */
export function categoricalAgreement(pairs: ReadonlyArray<readonly [string, string]>): Agreement {
  const n = pairs.length;
  if (n === 0) return { pairs: 0, agreementRate: null, kappa: null, meanAbsoluteDifference: null };
  const judge = new Map<string, number>();
  const human = new Map<string, number>();
  let same = 0;
  for (const [j, h] of pairs) {
    if (j === h) same++;
    judge.set(j, (judge.get(j) ?? 0) + 1);
    human.set(h, (human.get(h) ?? 0) + 1);
  }
  const po = same / n;
  let pe = 0;
  for (const [c, k] of judge) pe += (k / n) * ((human.get(c) ?? 0) / n);
  // Both raters gave one and the same category every time: chance explains everything, kappa is undefined.
  const kappa = pe >= 1 ? null : (po - pe) / (1 - pe);
  return { pairs: n, agreementRate: po, kappa, meanAbsoluteDifference: null };
}

/** Verdict pairs of a number evaluator: `[judge, reviewer]`. */
export function numericAgreement(pairs: ReadonlyArray<readonly [number, number]>): Agreement {
  const n = pairs.length;
  if (n === 0) return { pairs: 0, agreementRate: null, kappa: null, meanAbsoluteDifference: null };
  const mad = pairs.reduce((sum, [j, h]) => sum + Math.abs(j - h), 0) / n;
  return { pairs: n, agreementRate: null, kappa: null, meanAbsoluteDifference: mad };
}
