import { checkServerIdentity } from "node:tls";
import type { DeliveryFetch } from "./attempt";

/**
 * Connects to the address the destination check validated, not to whatever the host name
 * resolves to a moment later (DNS rebinding): the URL's host becomes the IP literal, while the
 * Host header, TLS SNI and the certificate check keep the original name. `tls` is Bun's fetch
 * extension; on other runtimes replace this with an agent that pins the address. `ca` is for
 * tests with a private certificate authority.
 */
export function createPinnedFetch(options: { ca?: string } = {}): DeliveryFetch {
  return (url, init, { address, hostname }) => {
    const target = new URL(url);
    const hostHeader = target.host;
    target.hostname = address.includes(":") ? `[${address}]` : address;
    const headers = new Headers(init.headers);
    headers.set("host", hostHeader);
    const isName = hostname !== address;
    const tls =
      target.protocol === "https:"
        ? {
            ...(options.ca ? { ca: options.ca } : {}),
            ...(isName ? { serverName: hostname, checkServerIdentity: (_host: string, cert: any) => checkServerIdentity(hostname, cert) } : {}),
          }
        : undefined;
    return fetch(target, { ...init, headers, ...(tls ? { tls } : {}) } as RequestInit);
  };
}

export const pinnedFetch: DeliveryFetch = createPinnedFetch();
