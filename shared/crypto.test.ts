import { describe, expect, test } from "bun:test";
import { canonicalJson, fromBase64, SecretBox, SecretUnreadableError, randomBytes, toBase64 } from "./crypto.ts";

test("canonicalJson sorts keys at every level and keeps array order", () => {
  expect(canonicalJson({ b: 1, a: { d: [3, { z: 1, y: 2 }], c: null } })).toBe(
    '{"a":{"c":null,"d":[3,{"y":2,"z":1}]},"b":1}',
  );
});

test("canonicalJson keeps a __proto__ key from parsed JSON (two bodies differing only there differ)", () => {
  const a = JSON.parse('{"__proto__": {"x": 1}, "b": 2}');
  const b = JSON.parse('{"b": 2}');
  expect(canonicalJson(a)).toBe('{"__proto__":{"x":1},"b":2}');
  expect(canonicalJson(a)).not.toBe(canonicalJson(b));
});

test("canonicalJson drops undefined like JSON.stringify and is stable for unicode", () => {
  expect(canonicalJson({ a: undefined, é: "😀", b: [undefined] })).toBe('{"b":[null],"é":"😀"}');
});

test("SecretBox round-trips and refuses a different key", async () => {
  const box = new SecretBox(toBase64(randomBytes(32)));
  const sealed = await box.seal("whsec_abc", "row-1");
  expect(sealed).not.toContain("whsec_abc");
  expect(await box.open(sealed, "row-1")).toBe("whsec_abc");
  await expect(new SecretBox(toBase64(randomBytes(32))).open(sealed, "row-1")).rejects.toThrow(SecretUnreadableError);
});

describe("SecretBox keyring", () => {
  const oldKey = toBase64(randomBytes(32));
  const newKey = toBase64(randomBytes(32));

  test("sealed values name their key; the row id is associated data (a copy into another row does not open)", async () => {
    const box = new SecretBox(newKey);
    const sealed = await box.seal("whsec_abc", "row-1");
    expect(sealed).toMatch(new RegExp(`^v2:${await box.currentKeyId()}:`));
    await expect(box.open(sealed, "row-2")).rejects.toThrow("does not authenticate for this row");
  });

  test("the new key seals, an old key still opens, and needsReseal tells them apart", async () => {
    const before = await new SecretBox(oldKey).seal("whsec_old", "row-1");
    const ring = new SecretBox(newKey, [oldKey]);
    expect(await ring.open(before, "row-1")).toBe("whsec_old");
    expect(await ring.needsReseal(before)).toBe(true);
    const after = await ring.seal("whsec_new", "row-1");
    expect(await ring.needsReseal(after)).toBe(false);
    expect(after.split(":")[1]).not.toBe(before.split(":")[1]);
  });

  test("a key dropped from the ring: the error names the missing key id", async () => {
    const sealed = await new SecretBox(oldKey).seal("whsec_old", "row-1");
    const keyId = sealed.split(":")[1];
    const err = await new SecretBox(newKey).open(sealed, "row-1").catch((e) => e);
    expect(err).toBeInstanceOf(SecretUnreadableError);
    expect(String(err.message)).toContain(`key ${keyId}, which is not in the keyring`);
  });

  test("values sealed before key ids (base64 iv|ciphertext, no associated data) still open", async () => {
    const key = await crypto.subtle.importKey("raw", fromBase64(oldKey), "AES-GCM", false, ["encrypt"]);
    const iv = randomBytes(12);
    const ct = new Uint8Array(
      await crypto.subtle.encrypt({ name: "AES-GCM", iv }, key, new TextEncoder().encode("whsec_legacy")),
    );
    const legacy = toBase64(new Uint8Array([...iv, ...ct]));
    const ring = new SecretBox(newKey, [oldKey]);
    expect(await ring.open(legacy, "any-row")).toBe("whsec_legacy");
    expect(await ring.needsReseal(legacy)).toBe(true);
  });
});
