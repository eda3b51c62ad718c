import type { Cidr } from "../webhooks/address.ts";
import { clientAddress } from "./client-address.ts";

/**
 * The one place that knows which runtime serves HTTP: `Deno.serve` under Deno (Elysia's
 * `.listen()` is Bun-only there: "WebStandard does not support listen"), `Bun.serve` under Bun.
 * Both take the same web-standard fetch handler, so the apps are unchanged.
 */
export interface Served {
  port: number;
  /**
   * The client address of a request this server is handling (what Bun's `server.requestIP` does):
   * the peer, or behind one of `trustedProxies` the address it forwarded (client-address.ts).
   */
  requestIP(request: Request): { address: string } | null;
  stop(): Promise<void>;
}

type DenoHandler = (r: Request, info: { remoteAddr: { hostname: string } }) => Response | Promise<Response>;
declare const Deno:
  | {
      serve(
        opts: { port: number; hostname: string; onListen?: (addr: { port: number }) => void },
        handler: DenoHandler,
      ): {
        addr: { port: number };
        shutdown(): Promise<void>;
      };
    }
  | undefined;

export function serveFetch(
  fetch: (request: Request) => Response | Promise<Response>,
  opts: { port: number; hostname?: string; maxRequestBodySize?: number; trustedProxies?: Cidr[] },
): Served {
  const hostname = opts.hostname ?? "0.0.0.0";
  const trusted = opts.trustedProxies ?? [];
  const client = (request: Request, peer: string | undefined) => {
    const address = clientAddress(peer, request.headers.get("x-forwarded-for"), trusted);
    return address === undefined ? null : { address };
  };
  if (typeof Deno !== "undefined") {
    const clients = new WeakMap<Request, string>();
    const server = Deno.serve({ port: opts.port, hostname, onListen: () => {} }, (request, info) => {
      clients.set(request, info.remoteAddr.hostname);
      return fetch(request);
    });
    return {
      port: server.addr.port,
      requestIP: (request) => client(request, clients.get(request)),
      stop: () => server.shutdown(),
    };
  }
  const server = Bun.serve({
    port: opts.port,
    hostname,
    fetch,
    ...(opts.maxRequestBodySize ? { maxRequestBodySize: opts.maxRequestBodySize } : {}),
  });
  return {
    port: server.port!,
    requestIP: (request) => client(request, server.requestIP(request)?.address),
    stop: async () => void (await server.stop()),
  };
}
