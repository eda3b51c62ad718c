import { connect, createServer, type Socket } from "node:net";

/** One client connection through the proxy: the name its CONNECT gave, and what the proxy did with it. */
export interface ProxiedConnection {
  name: string;
  /** Client-to-server bytes seen (forwarded or held). */
  bytesUp: number;
  /** Client-to-server bytes the proxy holds back instead of forwarding (holdAfter). */
  held: Buffer[];
  /** The client closed (or ended) its side: not the proxy, not the server. */
  closedByClient: boolean;
  client: Socket;
  upstream: Socket;
}

/**
 * A TCP proxy in front of a nats-server that knows each connection by its CONNECT name and can
 * hold a connection's outgoing bytes (a write that has not reached the server yet), cut
 * connections and refuse new ones by name: the bulk lane's tests make one connection stall or
 * vanish while the other carries on.
 */
export async function startNatsProxy(natsUrl: string) {
  const target = new URL(natsUrl.replace(/^nats:/, "http:"));
  const connections: ProxiedConnection[] = [];
  let refusedAtConnect = 0;
  let holdAfterBytes: number | undefined;
  let refuseNew = false;
  /** Accept, let the server's INFO through, and close on the client's CONNECT (refuseAfterConnect). */
  let dropAtConnect = false;
  /** Per connection: its bytesUp when the hold was armed. */
  const armed = new Map<ProxiedConnection, number>();

  const server = createServer((client) => {
    if (refuseNew) {
      client.destroy();
      return;
    }
    const upstream = connect(Number(target.port), target.hostname);
    const c: ProxiedConnection = { name: "", bytesUp: 0, held: [], closedByClient: false, client, upstream };
    let first = "";
    connections.push(c);
    if (holdAfterBytes !== undefined) armed.set(c, 0);
    upstream.on("data", (d) => client.write(d));
    upstream.on("close", () => client.destroy());
    upstream.on("error", () => client.destroy());
    client.on("error", () => upstream.destroy());
    client.on("end", () => (c.closedByClient = true));
    client.on("close", () => upstream.destroy());
    client.on("data", (d: Buffer) => {
      if (!c.name) {
        first += d.toString("latin1");
        const m = /CONNECT (\{.*?\})\r\n/.exec(first);
        if (m) c.name = (JSON.parse(m[1]) as { name?: string }).name ?? "?";
        if (m && dropAtConnect) {
          refusedAtConnect++;
          client.destroy();
          return;
        }
      }
      c.bytesUp += d.length;
      const armedAt = armed.get(c);
      if (
        c.held.length ||
        (armedAt !== undefined && holdAfterBytes !== undefined && c.bytesUp - armedAt > holdAfterBytes)
      ) {
        c.held.push(d);
        return;
      }
      upstream.write(d);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as { port: number }).port;
  return {
    url: `nats://127.0.0.1:${port}`,
    connections,
    /** From now on, a connection that sends more than `bytes` holds everything after (until `release`). */
    holdAfter(bytes: number) {
      holdAfterBytes = bytes;
      for (const c of connections) armed.set(c, c.bytesUp);
    },
    /** Stops holding: what was held goes to the server, in order. */
    release() {
      holdAfterBytes = undefined;
      armed.clear();
      for (const c of connections) for (const d of c.held.splice(0)) c.upstream.write(d);
    },
    /**
     * Closes the connections whose name matches and refuses every new connection until `allow`
     * (at once, before the server's INFO: a refusal after CONNECT stalls nats.js's reconnects).
     */
    cut(name: RegExp) {
      refuseNew = true;
      for (const c of connections) if (name.test(c.name)) c.client.destroy();
    },
    allow() {
      refuseNew = false;
      dropAtConnect = false;
    },
    /**
     * Closes the connections whose name matches; until `allow`, a new connection is accepted, gets
     * the server's INFO and is closed when its CONNECT arrives (a node that accepts, then drops).
     */
    refuseAfterConnect(name: RegExp) {
      dropAtConnect = true;
      for (const c of connections) if (name.test(c.name)) c.client.destroy();
    },
    /** How many connections refuseAfterConnect closed at their CONNECT. */
    refusedAtConnect: () => refusedAtConnect,

    open: (name: RegExp) => connections.filter((c) => name.test(c.name) && !c.client.destroyed),
    stop: () =>
      new Promise<void>((resolve) => {
        for (const c of connections) c.client.destroy();
        server.close(() => resolve());
      }),
  };
}
