import { expect, test } from "bun:test";
import postgres from "postgres";
import net from "node:net";

// postgres.js fetches array types as the first statement of every connection. A backend
// terminated then (pg_terminate_backend: a 57P01 ErrorResponse, then the socket closes) left the
// connection's query and error set across the reconnect: the next connection's first query failed
// with the old 57P01 and the dropped fetchArrayTypes() promise escaped as an unhandled rejection
// (porsager/postgres#1223, #1192), which failed test/maturation-connection-closed.test.ts about
// one run in three. scripts/patch-deps.mjs fixes it; without the patch this test fails.
// A proxy answers the first array-types query as a terminated backend does; later ones pass through.
test("a backend terminated while the connection fetches its array types: the query succeeds on the reconnect, nothing escapes", async () => {
  const url = new URL(process.env.DATABASE_URL!);
  let killedOnce = false;
  const server = net.createServer((client) => {
    const upstream = net.connect(Number(url.port), url.hostname);
    client.on("data", (d) => {
      if (!killedOnce && d.includes("typcategory")) {
        killedOnce = true;
        const fields = Buffer.concat([
          Buffer.from("SFATAL\0VFATAL\0C57P01\0Mterminating connection due to administrator command\0\0"),
        ]);
        const len = Buffer.alloc(4);
        len.writeInt32BE(fields.length + 4);
        client.write(Buffer.concat([Buffer.from("E"), len, fields]), () => {
          client.destroy();
          upstream.destroy();
        });
        return;
      }
      upstream.write(d);
    });
    upstream.on("data", (d) => client.write(d));
    upstream.on("error", () => client.destroy());
    client.on("error", () => upstream.destroy());
    client.on("close", () => upstream.destroy());
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const port = (server.address() as net.AddressInfo).port;
  const u = new URL(url);
  u.hostname = "127.0.0.1";
  u.port = String(port);
  const sql = postgres(u.toString(), { max: 1, onnotice: () => {} });
  const [r] = await sql`select 1 as one`;
  expect(r.one).toBe(1);
  expect(killedOnce).toBe(true);
  await new Promise((r) => setTimeout(r, 200));
  await sql.end({ timeout: 1 });
  server.close();
});
