import { afterAll, beforeAll, expect, test } from "bun:test";
import { bootstrapTenant } from "@cellar/shared/admin/tenancy";
import { maturationsOf, type MaturedMessage, type MaturedStreamMessage } from "@cellar/shared/payloads";
import { createTestStack, waitFor, type TestStack } from "./helpers/stack";
import { chatTrace } from "./helpers/payloads";

let stack: TestStack;
let tenant: Awaited<ReturnType<typeof bootstrapTenant>>;

beforeAll(async () => {
  stack = await createTestStack({ windowSeconds: 1 });
  tenant = await bootstrapTenant(stack.database.db, { name: "acme" });
});
afterAll(() => stack.stop());

async function sessionEvents(sessionId: string): Promise<MaturedMessage[]> {
  const { jsm, topology } = stack.nats;
  const info = await jsm.streams.info(topology.maturedStream);
  const out: MaturedMessage[] = [];
  for (let seq = info.state.first_seq; info.state.messages > 0 && seq <= info.state.last_seq; seq++) {
    const m = await jsm.streams.getMessage(topology.maturedStream, { seq }).catch(() => null);
    for (const body of m ? maturationsOf(m.json<MaturedStreamMessage>()) : [])
      if (body.type === "session.matured" && body.sessionId === sessionId) out.push(body);
  }
  return out;
}

const send = async (sessionId: string, content: string) => {
  const r = await stack.ingestRequest(
    "/raw/traces",
    chatTrace({ sessionId, messages: [{ role: "user", content }], reply: "ok" }),
    {
      authorization: `Bearer ${tenant.telemetryKey}`,
    },
  );
  expect(r.status).toBe(200);
};

test("a maturation more than 30 days after the last one restarts maturation_count at 1; a recent one increments", async () => {
  for (const id of ["old-1", "recent-1"]) await send(id, `hello ${id}`);
  for (const id of ["old-1", "recent-1"])
    await waitFor(async () => (await sessionEvents(id)).length === 1, { what: `first maturation of ${id}` });
  // The dedup history of old-1's first event is past retention; recent-1's is 29 days old.
  await stack.database.sql`update sessions set matured_at = now() - interval '31 days' where session_id = 'old-1'`;
  await stack.database.sql`update sessions set matured_at = now() - interval '29 days' where session_id = 'recent-1'`;
  for (const id of ["old-1", "recent-1"]) await send(id, `back again ${id}`);
  const old = await waitFor(
    async () => {
      const e = await sessionEvents("old-1");
      return e.length === 2 && e;
    },
    { what: "old-1 re-matured" },
  );
  const recent = await waitFor(
    async () => {
      const e = await sessionEvents("recent-1");
      return e.length === 2 && e;
    },
    { what: "recent-1 re-matured" },
  );
  expect(old.map((m) => m.maturationCount)).toEqual([1, 1]);
  expect(Date.parse(old[1].occurredAt)).toBeGreaterThan(Date.parse(old[0].occurredAt));
  expect(recent.map((m) => m.maturationCount)).toEqual([1, 2]);
  // published_count is recorded after the chunk's publishes are acknowledged: it can trail the
  // message on the stream by a moment.
  const row = await waitFor(
    async () => {
      const [r] = await stack.database
        .sql`select maturation_count, published_count from sessions where session_id = 'old-1'`;
      return r?.published_count === r?.maturation_count && r;
    },
    { what: "old-1's publish recorded" },
  );
  expect(row).toEqual({ maturation_count: 1, published_count: 1 });
});
