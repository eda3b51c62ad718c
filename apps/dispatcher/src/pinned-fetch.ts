import { checkServerIdentity } from "node:tls";
import type { DeliveryFetch } from "./attempt";

/**
 * Connects to the address the destination check validated, not to whatever the host name
 * resolves to a moment later (DNS rebinding): the URL's host becomes the IP literal, while the
 * Host header, TLS SNI and certificate check keep the original name. `tls` is Bun's fetch
 * extension; on other runtimes replace this with an agent that pins the address.
 */
export const pinnedFetch: DeliveryFetch = (url, init, { address, hostname }) => {
  const target = new URL(url);
  const hostHeader = target.host;
  target.hostname = address.includes(":") ? `[${address}]` : address;
  const headers = new Headers(init.headers);
  headers.set("host", hostHeader);
  const isName = hostname !== address;
  return fetch(target, {
    ...init,
    headers,
    ...(isName && target.protocol === "https:"
      ? { tls: { serverName: hostname, checkServerIdentity: (_host: string, cert: any) => checkServerIdentity(hostname, cert) } }
      : {}),
  } as RequestInit);
};
