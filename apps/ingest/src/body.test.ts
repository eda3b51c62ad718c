import { expect, test } from "bun:test";
import { inflatedSizeHint, parseJsonStrict } from "./body.ts";

const problem = (text: string) => {
  try {
    parseJsonStrict(text);
    return null;
  } catch (err) {
    return (err as Error).message;
  }
};

test("keys and strings that merely look alike are not duplicates", () => {
  expect(problem('{"a": "\\"b\\": 1", "b": {"a": 1}, "c": [{"a": 1}, {"a": 2}], "d\\"": "x:", "e" : ":"}')).toBeNull();
});

test("a duplicate written with an escape is still a duplicate, named by its decoded name", () => {
  expect(problem('{"a": 1, "\\u0061": 2}')).toBe("invalid a: duplicate key");
});

test("a duplicate inside an array item is located by index", () => {
  expect(problem('{"list": [{"x": 1}, {"x": 1, "y": {"z": 1, "z" :2}}]}')).toBe("invalid list[1].y.z: duplicate key");
});

test("depth is counted in objects and arrays alike", () => {
  const ok = "[".repeat(63) + "]".repeat(63);
  expect(problem(`{"a": ${ok}}`)).toBeNull();
  expect(problem(`{"a": ${"[".repeat(64) + "]".repeat(64)}}`)).toContain("nesting deeper than 64");
});

test("a huge nesting attack is refused without blowing the stack", () => {
  const n = 200_000;
  expect(problem(`{"a": ${"[".repeat(n) + "]".repeat(n)}}`)).toMatch(/nesting deeper|not valid JSON/);
});

test("control characters in an offending key are escaped in the message", () => {
  expect(problem('{"k\\u0000": 1}')).toBe(
    "invalid k\\u0000: key contains a NUL character (\\u0000), which cannot be stored",
  );
});

test("a low surrogate alone and a reversed pair are refused; a real pair is fine", () => {
  expect(problem('{"a": "\\udc00"}')).toContain("unpaired UTF-16 surrogate");
  expect(problem('{"a": "\\udc00\\ud800"}')).toContain("unpaired UTF-16 surrogate");
  expect(problem('{"a": "\\ud83d\\ude80"}')).toBeNull();
});

test("duplicate detection on a 4 MB body stays fast", () => {
  const big = JSON.stringify({
    messages: Array.from({ length: 20_000 }, (_, i) => ({ role: "user", content: `m${i} `.repeat(20), i })),
  });
  expect(big.length).toBeGreaterThan(2_000_000);
  const t0 = performance.now();
  expect(problem(big)).toBeNull();
  // Generous: guards against an accidentally quadratic scan, not a timing target.
  expect(performance.now() - t0).toBeLessThan(5_000);
});

test("a gzip body's size hint is its trailer's inflated size; other bodies are their length", () => {
  for (const size of [0, 1, 5_000, 300_000]) {
    const text = new TextEncoder().encode("x".repeat(size));
    const gz = Bun.gzipSync(text);
    expect(inflatedSizeHint({ bytes: gz, gzip: true })).toBe(Math.max(gz.byteLength, size));
    expect(inflatedSizeHint({ bytes: text, gzip: false })).toBe(size);
  }
  // Too short to have a trailer, or a trailer stating less than was sent: the length.
  expect(inflatedSizeHint({ bytes: new Uint8Array(10), gzip: true })).toBe(10);
  expect(inflatedSizeHint({ bytes: new Uint8Array(40), gzip: true })).toBe(40);
  // A trailer past 2^31 is read unsigned.
  const big = new Uint8Array(20);
  big.set([0, 0, 0, 0x90], 16);
  expect(inflatedSizeHint({ bytes: big, gzip: true })).toBe(0x90000000);
});
