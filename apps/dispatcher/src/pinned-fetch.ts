import { checkServerIdentity } from "node:tls";
import type { DeliveryFetch } from "./send.ts";

/**
 * Connects to the address the destination check validated, not to whatever the host name
 * resolves to a moment later (DNS rebinding): the URL's host becomes the IP literal, while the
 * Host header, TLS SNI and the certificate check keep the original name. `tls` is Bun's fetch
 * extension; on other runtimes replace this with an agent that pins the address. `ca` is for
 * tests with a private certificate authority.
 *
 * `proxy: false`: Bun's fetch otherwise sends through HTTP(S)_PROXY from the environment, to a
 * host the destination check never saw. `decompress: false` and `accept-encoding: identity`: a
 * receiver's answer is never inflated (a 2 MB gzip that inflates to 2 GiB once cost 3 GB of RSS);
 * the caller reads at most a small prefix of the raw bytes.
 */
export function createPinnedFetch(options: { ca?: string } = {}): DeliveryFetch {
  return (url, init, { address, hostname }) => {
    const target = new URL(url);
    const hostHeader = target.host;
    target.hostname = address.includes(":") ? `[${address}]` : address;
    const headers = new Headers(init.headers);
    headers.set("host", hostHeader);
    headers.set("accept-encoding", "identity");
    const isName = hostname !== address;
    const tls =
      target.protocol === "https:"
        ? {
            ...(options.ca ? { ca: options.ca } : {}),
            ...(isName
              ? {
                  serverName: hostname,
                  checkServerIdentity: (_host: string, cert: any) => checkServerIdentity(hostname, cert),
                }
              : {}),
          }
        : undefined;
    return fetch(target, { ...init, headers, proxy: false, decompress: false, ...(tls ? { tls } : {}) } as RequestInit);
  };
}

export const pinnedFetch: DeliveryFetch = createPinnedFetch();
