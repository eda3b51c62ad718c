import { createServer } from "node:net";

/**
 * Ports this process has handed out. The OS may give back the port it gave the previous call (that
 * socket is closed by then), so a stack choosing one port per app could give two apps one port:
 * the second fails to bind and the first answers for both (CI saw ingest's URL answered by another
 * app). No port is handed out twice in a process.
 */
const handedOut = new Set<number>();

/** A port the OS says is free right now on 127.0.0.1, never one this process handed out before. */
export async function freePort(): Promise<number> {
  for (let attempt = 0; attempt < 100; attempt++) {
    const port = await osFreePort();
    if (!handedOut.has(port)) {
      handedOut.add(port);
      return port;
    }
  }
  throw new Error("no free port the OS offered was new to this process (100 tries)");
}

function osFreePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once("error", reject);
    srv.listen(0, "127.0.0.1", () => {
      const port = (srv.address() as { port: number }).port;
      srv.close(() => resolve(port));
    });
  });
}

export async function waitForPort(port: number, timeoutMs = 15_000): Promise<void> {
  const { connect } = await import("node:net");
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const ok = await new Promise<boolean>((resolve) => {
      const sock = connect(port, "127.0.0.1");
      sock.once("connect", () => {
        sock.destroy();
        resolve(true);
      });
      sock.once("error", () => resolve(false));
    });
    if (ok) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`nothing listened on port ${port} within ${timeoutMs} ms`);
}
