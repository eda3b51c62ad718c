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

/** AES-GCM sealing for secrets stored at rest (webhook signing secrets). Output: base64(iv|ciphertext). */
export class SecretBox {
  private keyPromise: Promise<CryptoKey>;
  constructor(base64Key: string) {
    this.keyPromise = crypto.subtle.importKey("raw", fromBase64(base64Key), "AES-GCM", false, ["encrypt", "decrypt"]);
  }
  async seal(plain: string): Promise<string> {
    const iv = randomBytes(12);
    const ct = new Uint8Array(await crypto.subtle.encrypt({ name: "AES-GCM", iv }, await this.keyPromise, encoder.encode(plain)));
    const out = new Uint8Array(iv.length + ct.length);
    out.set(iv);
    out.set(ct, iv.length);
    return toBase64(out);
  }
  async open(sealed: string): Promise<string> {
    const raw = fromBase64(sealed);
    const pt = await crypto.subtle.decrypt({ name: "AES-GCM", iv: raw.slice(0, 12) }, await this.keyPromise, raw.slice(12));
    return new TextDecoder().decode(pt);
  }
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
