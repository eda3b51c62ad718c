import { expect, test } from "bun:test";
import { categoricalAgreement, numericAgreement } from "./agreement.ts";

const repeat = <T>(pair: T, n: number) => Array.from({ length: n }, () => pair);

test("Cohen's kappa of the textbook 2x2 table (20 yes/yes, 5 yes/no, 10 no/yes, 15 no/no) is 0.4", () => {
  const pairs = [
    ...repeat(["true", "true"] as const, 20),
    ...repeat(["true", "false"] as const, 5),
    ...repeat(["false", "true"] as const, 10),
    ...repeat(["false", "false"] as const, 15),
  ];
  const a = categoricalAgreement(pairs);
  expect(a.pairs).toBe(50);
  expect(a.agreementRate).toBeCloseTo(0.7, 10);
  expect(a.kappa).toBeCloseTo(0.4, 10);
});

test("three labels: po 0.6, pe 0.335, kappa 0.3985; perfect agreement is 1; opposite is -1", () => {
  // judge/human counts: a/a 25, b/b 20, c/c 15, a/b 10, b/c 15, c/a 15 (n = 100).
  const pairs = [
    ...repeat(["a", "a"] as const, 25),
    ...repeat(["b", "b"] as const, 20),
    ...repeat(["c", "c"] as const, 15),
    ...repeat(["a", "b"] as const, 10),
    ...repeat(["b", "c"] as const, 15),
    ...repeat(["c", "a"] as const, 15),
  ];
  // judge: a 35, b 35, c 30; human: a 40, b 30, c 30 -> pe = .35*.40 + .35*.30 + .30*.30 = 0.335
  const a = categoricalAgreement(pairs);
  expect(a.agreementRate).toBeCloseTo(0.6, 10);
  expect(a.kappa).toBeCloseTo((0.6 - 0.335) / (1 - 0.335), 10);
  expect(
    categoricalAgreement([
      ["x", "x"],
      ["y", "y"],
    ]).kappa,
  ).toBe(1);
  expect(
    categoricalAgreement([
      ["x", "y"],
      ["y", "x"],
    ]).kappa,
  ).toBe(-1);
  expect(
    categoricalAgreement([
      ["x", "x"],
      ["x", "x"],
    ]).kappa,
  ).toBeNull();
  expect(categoricalAgreement([])).toEqual({
    pairs: 0,
    agreementRate: null,
    kappa: null,
    meanAbsoluteDifference: null,
  });
});

test("numbers: mean absolute difference", () => {
  expect(
    numericAgreement([
      [0.8, 0.6],
      [0.2, 0.5],
      [1, 1],
    ]).meanAbsoluteDifference,
  ).toBeCloseTo(0.5 / 3, 10);
});
