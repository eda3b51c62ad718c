import { afterAll, beforeAll, expect, test } from "bun:test";
import { bootstrapTenant } from "@cellar/shared/admin/tenancy";
import { maturationsOf, type MaturedMessage, type MaturedStreamMessage } from "@cellar/shared/payloads";
import { createTestStack, waitFor, type TestStack } from "./helpers/stack";
import { chatTrace } from "./helpers/payloads";

// The chaos run at load 51 lost session.matured #2 for good: #2 committed, its MATURED publish
// failed (a NATS node restarting), the session reopened and #3 committed over the row's count
// and time before #2 was published; that publish failed too, and every retry rebuilt only #3
// from the row. A reopened row's owed maturation is now published and recorded before a new one
// commits (docs/maturation.md, "Re-open").
let stack: TestStack;
let tenant: Awaited<ReturnType<typeof bootstrapTenant>>;
/** While true, every MATURED publish of the session fails as a restarting NATS node answers. */
let natsDown = false;
/** Failed publish attempts: when, and which maturation count they carried first. */
const failedAttempts: Array<{ at: number; count: number }> = [];
const SESSION = "owed-reopen-1";

beforeAll(async () => {
  stack = await createTestStack({ windowSeconds: 1, startProcessor: false });
  tenant = await bootstrapTenant(stack.database.db, { name: "acme" });
  await stack.startProcessor({
    // Runs before the MATURED publish, after the commit: throwing here is a publish that failed.
    afterCommit: (m: MaturedMessage) => {
      if (!natsDown || m.type !== "session.matured" || m.sessionId !== SESSION) return;
      failedAttempts.push({ at: Date.now(), count: m.maturationCount });
      // What the chaos run saw; transient (shared/nats/failure.ts): retried shortly, never parks.
      throw Object.assign(new Error("jetstream is not enabled"), { name: "JetStreamNotEnabled" });
    },
  });
});
afterAll(() => stack.stop());

const send = async (content: string) => {
  const r = await stack.ingestRequest(
    "/raw/traces",
    chatTrace({ sessionId: SESSION, messages: [{ role: "user", content }], reply: "ok" }),
    { authorization: `Bearer ${tenant.telemetryKey}` },
  );
  expect(r.status).toBe(200);
};

async function sessionEvents(): Promise<MaturedMessage[]> {
  const { jsm, topology } = stack.nats;
  const info = await jsm.streams.info(topology.maturedStream);
  const out: MaturedMessage[] = [];
  for (let seq = info.state.first_seq; seq <= info.state.last_seq && info.state.messages > 0; seq++) {
    const m = await jsm.streams.getMessage(topology.maturedStream, { seq }).catch(() => null);
    if (m)
      for (const body of maturationsOf(m.json<MaturedStreamMessage>()))
        if (body.type === "session.matured" && body.sessionId === SESSION) out.push(body);
  }
  return out;
}

async function row() {
  const [r] = await stack.database.sql<
    { status: string; maturation_count: number; published_count: number; activity_seq: string }[]
  >`select status, maturation_count, published_count, activity_seq from sessions where session_id = ${SESSION}`;
  return r;
}

test("a session reopened while its maturation's publish is owed, maturing again while NATS still fails, publishes #1, #2 and #3 once each", async () => {
  await send("one");
  await waitFor(async () => (await row())?.published_count === 1, { what: "#1 published" });

  // #2 commits, its publish fails.
  natsDown = true;
  await send("two");
  await waitFor(
    async () => {
      const r = await row();
      return r.maturation_count === 2 && r.status === "matured" && failedAttempts.some((a) => a.count === 2);
    },
    { what: "#2 committed, its publish failed" },
  );
  expect((await row()).published_count).toBe(1);

  // Reopened with a new trace while #2 is still owed, and idle again for the window: the
  // maturation pass comes while publishing still fails.
  const seq = Number((await row()).activity_seq);
  await send("three");
  await waitFor(async () => Number((await row()).activity_seq) > seq, { what: "reopened" });
  const reopenedAt = Date.now();
  await waitFor(async () => failedAttempts.filter((a) => a.at > reopenedAt + 1_300).length >= 2, {
    what: "maturation passes of the reopened session with publishing failing",
    timeoutMs: 20_000,
  });
  // Nothing committed over the owed #2 while it could not be published.
  expect(await row()).toMatchObject({ maturation_count: 2, published_count: 1 });
  expect((await sessionEvents()).map((m) => m.maturationCount)).toEqual([1]);

  // Publishing works again: the owed #2 goes out, then the session matures as #3.
  natsDown = false;
  await waitFor(async () => (await row()).published_count === 3, { what: "#3 published", timeoutMs: 20_000 });
  await new Promise((r) => setTimeout(r, 500));
  const events = await sessionEvents();
  expect(events.map((m) => m.maturationCount)).toEqual([1, 2, 3]);
  expect(new Set(events.map((m) => m.occurredAt)).size).toBe(3);
  expect(await row()).toMatchObject({ status: "matured", maturation_count: 3, published_count: 3 });
});
