/** Web Crypto helpers (run on Bun, Deno and Node alike). */
const encoder = new TextEncoder();

export function toBase64(bytes: Uint8Array): string {
  let bin = "";
  for (const b of bytes) bin += String.fromCharCode(b);
  return btoa(bin);
}

export function fromBase64(value: string): Uint8Array<ArrayBuffer> {
  return Uint8Array.from(atob(value), (c) => c.charCodeAt(0));
}

export function toHex(bytes: ArrayBuffer | Uint8Array): string {
  const view = bytes instanceof Uint8Array ? bytes : new Uint8Array(bytes);
  return Array.from(view, (b) => b.toString(16).padStart(2, "0")).join("");
}

export async function sha256Hex(input: string | Uint8Array<ArrayBuffer>): Promise<string> {
  const data = typeof input === "string" ? encoder.encode(input) : input;
  return toHex(await crypto.subtle.digest("SHA-256", data));
}

export function randomBytes(n: number): Uint8Array<ArrayBuffer> {
  return crypto.getRandomValues(new Uint8Array(n));
}

/** base64url without padding: safe in keys, headers and URLs. */
export function randomToken(bytes = 24): string {
  return toBase64(randomBytes(bytes)).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
}

/** A secret that no key in the keyring opens (a retired key was dropped, or the row was tampered with). */
export class SecretUnreadableError extends Error {
  override name = "SecretUnreadableError";
}

const SEALED_V2 = /^v2:([0-9a-f]{8}):([A-Za-z0-9+/=]+)$/;

/**
 * AES-256-GCM sealing for secrets stored at rest (webhook signing secrets), with a keyring.
 *
 * Output `v2:<key id>:base64(iv|ciphertext)`. The key id (8 hex digits of a hash of the key)
 * names the key that sealed it, and `aad` (the owning row's id) is authenticated with it, so a
 * ciphertext copied into another row does not open. The first key seals; every key, current or
 * retired (SECRET_ENCRYPTION_KEYS_PREVIOUS), opens. Values sealed before key ids existed (plain
 * base64, no associated data) still open with any key in the ring; `needsReseal` says which
 * values the admin `secrets reencrypt` command should rewrite.
 */
export class SecretBox {
  private keys: Array<Promise<{ id: string; key: CryptoKey }>>;
  constructor(currentBase64Key: string, previousBase64Keys: string[] = []) {
    this.keys = [currentBase64Key, ...previousBase64Keys].map(async (b64) => {
      const raw = fromBase64(b64);
      const id = (await sha256Hex(new Uint8Array([...encoder.encode("cellar-secret-key-id:"), ...raw]))).slice(0, 8);
      return { id, key: await crypto.subtle.importKey("raw", raw, "AES-GCM", false, ["encrypt", "decrypt"]) };
    });
  }

  /** The id of the key that seals now. */
  async currentKeyId(): Promise<string> {
    return (await this.keys[0]).id;
  }

  async seal(plain: string, aad: string): Promise<string> {
    const { id, key } = await this.keys[0];
    const iv = randomBytes(12);
    const ct = new Uint8Array(
      await crypto.subtle.encrypt(
        { name: "AES-GCM", iv, additionalData: encoder.encode(aad) },
        key,
        encoder.encode(plain),
      ),
    );
    const out = new Uint8Array(iv.length + ct.length);
    out.set(iv);
    out.set(ct, iv.length);
    return `v2:${id}:${toBase64(out)}`;
  }

  /** Throws SecretUnreadableError, naming the key id, when no key in the ring opens it. */
  async open(sealed: string, aad: string): Promise<string> {
    const v2 = SEALED_V2.exec(sealed);
    if (v2) {
      const entry = (await Promise.all(this.keys)).find((k) => k.id === v2[1]);
      if (!entry)
        throw new SecretUnreadableError(
          `sealed with key ${v2[1]}, which is not in the keyring (SECRET_ENCRYPTION_KEY / SECRET_ENCRYPTION_KEYS_PREVIOUS)`,
        );
      const raw = fromBase64(v2[2]);
      try {
        const pt = await crypto.subtle.decrypt(
          { name: "AES-GCM", iv: raw.slice(0, 12), additionalData: encoder.encode(aad) },
          entry.key,
          raw.slice(12),
        );
        return new TextDecoder().decode(pt);
      } catch {
        throw new SecretUnreadableError(
          `sealed with key ${v2[1]} but does not authenticate for this row (altered or copied from another row)`,
        );
      }
    }
    // Legacy: base64(iv|ciphertext) with no key id and no associated data; try every key.
    let raw: Uint8Array<ArrayBuffer>;
    try {
      raw = fromBase64(sealed);
    } catch {
      throw new SecretUnreadableError("is not a sealed value");
    }
    for (const entry of await Promise.all(this.keys)) {
      try {
        return new TextDecoder().decode(
          await crypto.subtle.decrypt({ name: "AES-GCM", iv: raw.slice(0, 12) }, entry.key, raw.slice(12)),
        );
      } catch {}
    }
    throw new SecretUnreadableError("sealed without a key id by a key that is not in the keyring");
  }

  /** True when `sealed` is not under the current key (or predates key ids). */
  async needsReseal(sealed: string): Promise<boolean> {
    const v2 = SEALED_V2.exec(sealed);
    return !v2 || v2[1] !== (await this.currentKeyId());
  }
}

/** The keyring from config: SECRET_ENCRYPTION_KEY seals, SECRET_ENCRYPTION_KEYS_PREVIOUS still open. */
export function keyringFromConfig(config: {
  SECRET_ENCRYPTION_KEY: string;
  SECRET_ENCRYPTION_KEYS_PREVIOUS?: string;
}): SecretBox {
  const previous = (config.SECRET_ENCRYPTION_KEYS_PREVIOUS ?? "")
    .split(",")
    .map((s) => s.trim())
    .filter(Boolean);
  return new SecretBox(config.SECRET_ENCRYPTION_KEY, previous);
}

/**
 * Deterministic JSON: object keys sorted at every level. Used for message ids (same payload,
 * same id) and for webhook bodies (the contract wants keys in alphabetical order).
 */
export function canonicalJson(value: unknown): string {
  return JSON.stringify(sortKeys(value));
}

function isPlainObject(value: object): boolean {
  const proto = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}

function sortKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortKeys);
  if (value && typeof value === "object" && isPlainObject(value)) {
    // No prototype: a "__proto__" key from JSON.parse stays an ordinary key instead of vanishing.
    const out: Record<string, unknown> = Object.create(null);
    for (const key of Object.keys(value as object).sort()) {
      const v = (value as Record<string, unknown>)[key];
      if (v !== undefined) out[key] = sortKeys(v);
    }
    return out;
  }
  return value;
}
