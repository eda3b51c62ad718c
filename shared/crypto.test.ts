import { expect, test } from "bun:test";
import { canonicalJson, SecretBox, randomBytes, toBase64 } from "./crypto";

test("canonicalJson sorts keys at every level and keeps array order", () => {
  expect(canonicalJson({ b: 1, a: { d: [3, { z: 1, y: 2 }], c: null } })).toBe('{"a":{"c":null,"d":[3,{"y":2,"z":1}]},"b":1}');
});

test("canonicalJson keeps a __proto__ key from parsed JSON (two bodies differing only there differ)", () => {
  const a = JSON.parse('{"__proto__": {"x": 1}, "b": 2}');
  const b = JSON.parse('{"b": 2}');
  expect(canonicalJson(a)).toBe('{"__proto__":{"x":1},"b":2}');
  expect(canonicalJson(a)).not.toBe(canonicalJson(b));
});

test("canonicalJson drops undefined like JSON.stringify and is stable for unicode", () => {
  expect(canonicalJson({ a: undefined, "é": "😀", b: [undefined] })).toBe('{"b":[null],"é":"😀"}');
});

test("SecretBox round-trips and refuses a different key", async () => {
  const box = new SecretBox(toBase64(randomBytes(32)));
  const sealed = await box.seal("whsec_abc");
  expect(sealed).not.toContain("whsec_abc");
  expect(await box.open(sealed)).toBe("whsec_abc");
  await expect(new SecretBox(toBase64(randomBytes(32))).open(sealed)).rejects.toThrow();
});
