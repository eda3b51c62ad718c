/**
 * The one place that knows which runtime serves HTTP: `Deno.serve` under Deno (Elysia's
 * `.listen()` is Bun-only there: "WebStandard does not support listen"), `Bun.serve` under Bun.
 * Both take the same web-standard fetch handler, so the apps are unchanged.
 */
export interface Served {
  port: number;
  stop(): Promise<void>;
}

declare const Deno: {
  serve(opts: { port: number; hostname: string; onListen?: (addr: { port: number }) => void }, handler: (r: Request) => Response | Promise<Response>): {
    addr: { port: number };
    shutdown(): Promise<void>;
  };
} | undefined;

export function serveFetch(fetch: (request: Request) => Response | Promise<Response>, opts: { port: number; hostname?: string; maxRequestBodySize?: number }): Served {
  const hostname = opts.hostname ?? "0.0.0.0";
  if (typeof Deno !== "undefined") {
    const server = Deno.serve({ port: opts.port, hostname, onListen: () => {} }, fetch);
    return { port: server.addr.port, stop: () => server.shutdown() };
  }
  const server = Bun.serve({ port: opts.port, hostname, fetch, ...(opts.maxRequestBodySize ? { maxRequestBodySize: opts.maxRequestBodySize } : {}) });
  return { port: server.port!, stop: async () => void (await server.stop()) };
}
