import { afterAll, beforeAll, expect, test } from "bun:test";
import { createServer, connect, type Server, type Socket } from "node:net";
import { createDatabase } from "@cellar/shared/db/client";
import { freePort } from "../scripts/infra/ports";

// Found by the chaos run: after a Postgres restart an app's pool took 12-20 s to work again.
// postgres.js waits (0.5-1) x min(3^failures / 100, 20) s before reconnecting, and the failure
// count is shared by the pool, so a few seconds of outage grew the wait to ~20 s. A switchable
// TCP proxy in front of the test Postgres stands in for the restart.
let proxy: Server | undefined;
let port: number;
const open = new Set<Socket>();
const target = new URL(process.env.DATABASE_URL!);

function proxyUp(): Promise<void> {
  return new Promise((res) => {
    proxy = createServer((client) => {
      const upstream = connect(Number(target.port), target.hostname);
      open.add(client).add(upstream);
      client.pipe(upstream).pipe(client);
      const drop = () => {
        client.destroy();
        upstream.destroy();
        open.delete(client);
        open.delete(upstream);
      };
      client.on("error", drop).on("close", drop);
      upstream.on("error", drop).on("close", drop);
    }).listen(port, "127.0.0.1", () => res());
  });
}
async function proxyDown(): Promise<void> {
  for (const s of open) s.destroy();
  open.clear();
  await new Promise<void>((res) => (proxy ? proxy.close(() => res()) : res()));
  proxy = undefined;
}

beforeAll(async () => {
  port = await freePort();
  await proxyUp();
});
afterAll(() => proxyDown());

test("after 6 s of Postgres refusing connections, the pool answers within 2 s of Postgres coming back", async () => {
  const url = new URL(process.env.DATABASE_URL!);
  url.port = String(port);
  const database = createDatabase(url.toString(), { max: 4 });
  try {
    expect((await database.sql`select 1 as ok`)[0].ok).toBe(1);
    await proxyDown();
    // The outage: queries keep failing (as the apps' retries do), and the pool counts failures.
    const until = Date.now() + 6_000;
    while (Date.now() < until) {
      await database.sql`select 1`.catch(() => {});
      await new Promise((r) => setTimeout(r, 200));
    }
    await proxyUp();
    const back = Date.now();
    let answered = false;
    while (!answered && Date.now() - back < 30_000) {
      answered = await Promise.race([
        database.sql`select 1 as ok`.then(
          () => true,
          () => false,
        ),
        new Promise<boolean>((r) => setTimeout(() => r(false), 5_000)),
      ]);
      if (!answered) await new Promise((r) => setTimeout(r, 100));
    }
    expect(answered).toBe(true);
    expect(Date.now() - back).toBeLessThan(2_000);
  } finally {
    await database.close();
  }
}, 60_000);
