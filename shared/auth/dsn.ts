/**
 * DSNs that carry their endpoint (docs/sdks.md): `<prefix><config>.<secret>`, config being the
 * base64url (no padding) of the UTF-8 JSON {"v":1,"e":endpoint,"s":service}. Only the encoder
 * lives here: the server never parses a DSN (keys are looked up by the hash of the whole string),
 * the SDKs do (sdks/typescript/src/dsn.ts; test/sdk-dsn.test.ts checks the two agree).
 */

export const DSN_FORMAT_VERSION = 1;
/** Longest endpoint a DSN may carry: with a 200-character service the DSN stays under 1 KB. */
export const MAX_ENDPOINT_CHARS = 200;

/**
 * The ingest base URL as a DSN carries it: http(s), no credentials, query or fragment, no
 * trailing slash (SDKs append `/raw/batch`). Throws an Error saying what is wrong.
 */
export function normalizeEndpoint(text: string): string {
  let url: URL;
  try {
    url = new URL(text.trim());
  } catch {
    throw new Error(`${JSON.stringify(text)} is not a URL like https://ingest.example.com`);
  }
  if (url.protocol !== "https:" && url.protocol !== "http:")
    throw new Error(`${JSON.stringify(text)} must be an http or https URL`);
  if (url.username || url.password || url.search || url.hash)
    throw new Error(`${JSON.stringify(text)} must not carry credentials, a query or a fragment`);
  const normalized = `${url.origin}${url.pathname}`.replace(/\/+$/, "");
  if (normalized.length > MAX_ENDPOINT_CHARS)
    throw new Error(`${JSON.stringify(text)} is longer than ${MAX_ENDPOINT_CHARS} characters`);
  return normalized;
}

/** The DSN for `secret` (base64url, no "."), carrying `endpoint` (normalised) and `serviceName`. */
export function encodeDsn(prefix: string, config: { endpoint: string; serviceName: string }, secret: string): string {
  if (secret.includes(".")) throw new Error("a DSN secret must not contain '.'");
  const json = JSON.stringify({ v: DSN_FORMAT_VERSION, e: normalizeEndpoint(config.endpoint), s: config.serviceName });
  return `${prefix}${Buffer.from(json, "utf8").toString("base64url")}.${secret}`;
}
