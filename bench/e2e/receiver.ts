/**
 * The e2e bench's webhook receiver, a child process of its own (its CPU is not the system's):
 * verifies every delivery's Standard Webhooks signature with the subscription's secret, answers
 * 204, and keeps per delivery id its type, whether the signature held, and how long after the
 * maturation (`data.occurred_at`) it arrived. `GET /stats` returns and resets the tallies.
 *
 *   bun run bench/e2e/receiver.ts '<json: { port, secrets: { "<path>": "<whsec_...>" } }>'
 */
import { Webhook } from "standardwebhooks";
import type { Tally } from "./webhooks";

const o = JSON.parse(process.argv[2]) as { port: number; secrets: Record<string, string> };
const verifiers = new Map(Object.entries(o.secrets).map(([path, secret]) => [path, new Webhook(secret)]));

const fresh = (): Tally => ({ received: 0, valid: 0, invalid: 0, duplicates: 0, byType: {}, lagsMs: [] });
let tally = fresh();
// Delivery ids seen in the whole run (a retry reuses its id: counted as a duplicate, not twice).
const seen = new Set<string>();

const server = Bun.serve({
  port: o.port,
  hostname: "127.0.0.1",
  async fetch(req) {
    const url = new URL(req.url);
    if (req.method === "GET" && url.pathname === "/stats") {
      const out = tally;
      tally = fresh();
      return Response.json(out);
    }
    const body = await req.text();
    const headers = Object.fromEntries(req.headers);
    tally.received++;
    type Event = { type?: string; data?: { occurred_at?: string } };
    let verified: Event | null;
    try {
      verified = (verifiers.get(url.pathname)?.verify(body, headers) as Event | undefined) ?? null;
    } catch {
      verified = null;
    }
    if (!verified) {
      tally.invalid++;
      return new Response(null, { status: 204 });
    }
    tally.valid++;
    const id = headers["webhook-id"] ?? "";
    if (seen.has(id)) tally.duplicates++;
    else {
      seen.add(id);
      const type = verified.type ?? "unknown";
      tally.byType[type] = (tally.byType[type] ?? 0) + 1;
      const at = Date.parse(verified.data?.occurred_at ?? "");
      if (Number.isFinite(at)) tally.lagsMs.push(Date.now() - at);
    }
    return new Response(null, { status: 204 });
  },
});
process.on("SIGTERM", () => {
  server.stop(true);
  process.exit(0);
});
console.log("ready");
