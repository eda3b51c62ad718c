import type postgres from "postgres";
import { chatTrace } from "./payloads";
import { waitFor } from "./wait";

/** A webhook receiver on a free loopback port that keeps every request it gets. */
export function startReceiver() {
  const received: Array<{ headers: Record<string, string>; body: string }> = [];
  const server = Bun.serve({
    port: 0,
    hostname: "127.0.0.1",
    fetch: async (req) => {
      received.push({ headers: Object.fromEntries(req.headers), body: await req.text() });
      return new Response("ok");
    },
  });
  return { received, url: (path: string) => `http://127.0.0.1:${server.port}${path}`, stop: () => server.stop(true) };
}

/**
 * The path the apps-as-processes tests walk (test/system.test.ts, test/bundle.test.ts): a first
 * trace creates the service, a `session.matured` webhook goes to `hookUrl`, then one exchange
 * ("ping", "pong") in session `sessionId` comes out as a complete transcript and a delivery at
 * the receiver. Returns the subscription (its secret verifies the delivery), the transcript and
 * the delivery.
 */
export async function traceThroughApps(o: {
  sql: postgres.Sql;
  ingestUrl: string;
  platformUrl: string;
  tenant: { telemetryKey: string; platformKey: string };
  serviceName: string;
  sessionId: string;
  receiver: ReturnType<typeof startReceiver>;
}) {
  const trace = chatTrace({
    sessionId: o.sessionId,
    serviceName: o.serviceName,
    messages: [{ role: "user", content: "ping" }],
    reply: "pong",
  });
  const post = (body: unknown) =>
    fetch(`${o.ingestUrl}/raw/traces`, {
      method: "POST",
      headers: { authorization: `Bearer ${o.tenant.telemetryKey}`, "content-type": "application/json" },
      body: JSON.stringify(body),
    });
  // The service exists after the first trace; subscribe before the session can mature.
  const first = await post({ ...trace, session_id: "warmup" });
  if (first.status !== 200) throw new Error(`the first trace: ${first.status} ${await first.text()}`);
  const [svc] = await waitFor(
    async () => {
      const rows = await o.sql<{ id: string }[]>`select id from trace_services where name = ${o.serviceName}`;
      return rows.length ? rows : null;
    },
    { what: `the service ${o.serviceName} stored`, timeoutMs: 30_000 },
  );
  const created = await fetch(`${o.platformUrl}/webhooks`, {
    method: "POST",
    headers: { authorization: `Token ${o.tenant.platformKey}`, "content-type": "application/json" },
    body: JSON.stringify({
      trace_service_id: svc.id,
      name: "local",
      url: o.receiver.url("/hook"),
      event_types: ["session.matured"],
    }),
  });
  if (created.status >= 300) throw new Error(`the subscription: ${created.status} ${await created.text()}`);
  const subscription = (await created.json()) as { secret: string };
  const sent = await post(trace);
  if (sent.status !== 200) throw new Error(`the trace: ${sent.status} ${await sent.text()}`);
  const transcript = await waitFor(
    async () => {
      const r = await fetch(`${o.platformUrl}/telemetry/otel/sessions/${o.serviceName}/${o.sessionId}/transcript`, {
        headers: { authorization: `Token ${o.tenant.platformKey}` },
      });
      const body = r.ok ? await r.json() : null;
      return body?.status === "complete" ? body : null;
    },
    { what: `a complete transcript of ${o.sessionId}`, timeoutMs: 30_000 },
  );
  const delivery = await waitFor(
    async () => o.receiver.received.find((r) => JSON.parse(r.body).data?.session_id === o.sessionId),
    { what: `the webhook for ${o.sessionId}`, timeoutMs: 30_000 },
  );
  return { subscription, transcript, delivery };
}
