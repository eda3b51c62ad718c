/** A webhook receiver on 127.0.0.1 that answers 200 and keeps every request (path, headers, body, time). */
export function startRecordingReceiver(opts: { delayMs?: number } = {}) {
  const received: Array<{ path: string; headers: Record<string, string>; body: string; at: number }> = [];
  const server = Bun.serve({
    port: 0,
    hostname: "127.0.0.1",
    fetch: async (req) => {
      received.push({
        path: new URL(req.url).pathname,
        headers: Object.fromEntries(req.headers),
        body: await req.text(),
        at: Date.now(),
      });
      if (opts.delayMs) await Bun.sleep(opts.delayMs);
      return new Response("ok");
    },
  });
  return { received, port: server.port, stop: () => server.stop(true) };
}
