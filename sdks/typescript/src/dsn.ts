/**
 * Reads a DSN (docs/sdks.md): `svc-ing-s-` (server) or `svc-ing-c-` (client), then either
 * `<config>.<secret>` where config is base64url JSON {"v":1,"e":endpoint,"s":service}, or a
 * legacy secret alone (no "."), which carries neither. The secret is not checked: the server
 * does that (the whole string is the bearer token).
 */

export type DsnKind = "server" | "client";

export interface ParsedDsn {
  kind: DsnKind;
  /** The ingest base URL, without a trailing slash; undefined for a legacy DSN. */
  endpoint?: string;
  /** The DSN's service; undefined for a legacy DSN. */
  serviceName?: string;
  legacy: boolean;
}

export class DsnError extends Error {
  override name = "DsnError";
}

const PREFIXES: Record<string, DsnKind> = { "svc-ing-s-": "server", "svc-ing-c-": "client" };

export function parseDsn(dsn: string): ParsedDsn {
  if (typeof dsn !== "string") throw new DsnError("dsn must be a string");
  const kind = PREFIXES[dsn.slice(0, 10)];
  if (!kind) throw new DsnError("dsn must start with svc-ing-s- (server) or svc-ing-c- (client)");
  const rest = dsn.slice(10);
  const dot = rest.lastIndexOf(".");
  if (dot < 0) return { kind, legacy: true };
  let config: unknown;
  try {
    config = JSON.parse(decodeBase64Url(rest.slice(0, dot)));
  } catch {
    throw new DsnError("dsn's config part is not base64url JSON (was the DSN copied whole?)");
  }
  const { v, e, s } = (config ?? {}) as { v?: unknown; e?: unknown; s?: unknown };
  if (v !== 1) throw new DsnError(`dsn format version ${JSON.stringify(v)} is not supported by this SDK (1 is)`);
  if (typeof e !== "string" || !/^https?:\/\/[^/]/.test(e)) throw new DsnError("dsn carries no http(s) endpoint");
  if (typeof s !== "string" || s === "") throw new DsnError("dsn carries no service name");
  return { kind, endpoint: e.replace(/\/+$/, ""), serviceName: s, legacy: false };
}

function decodeBase64Url(text: string): string {
  if (!/^[A-Za-z0-9_-]*$/.test(text)) throw new DsnError("not base64url");
  const b64 = text.replace(/-/g, "+").replace(/_/g, "/") + "===".slice((text.length + 3) % 4);
  const binary = atob(b64);
  const bytes = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i);
  return new TextDecoder("utf-8", { fatal: true }).decode(bytes);
}
