import { subjects } from "@cellar/shared/nats/topology";
import { afterAll, beforeAll, expect, test } from "bun:test";
import { bootstrapTenant } from "@cellar/shared/admin/tenancy";
import { maturationsOf, type MaturedStreamMessage } from "@cellar/shared/payloads";
import { createTestStack, waitFor, type TestStack } from "./helpers/stack";
import { chatTrace } from "./helpers/payloads";

let stack: TestStack;
let tenant: Awaited<ReturnType<typeof bootstrapTenant>>;

beforeAll(async () => {
  stack = await createTestStack({ windowSeconds: 1 });
  tenant = await bootstrapTenant(stack.database.db, { name: "acme", webhooks: true });
});
afterAll(() => stack.stop());

test("a trace goes from /raw/traces to a complete transcript and a session.matured message", async () => {
  const trace = chatTrace({
    sessionId: "conv-1",
    messages: [
      { role: "system", content: "You are a helpful support bot." },
      { role: "user", content: "My invoice is wrong" },
    ],
    reply: "Sorry about that! Which invoice number?",
  });
  const res = await stack.ingestRequest("/raw/traces", trace, { authorization: `Bearer ${tenant.telemetryKey}` });
  expect(res.status).toBe(200);
  expect(await res.json()).toEqual({ status: "success" });

  // Before the window passes the session is not materialized yet.
  const early = await stack.platformRequest("/telemetry/otel/sessions/support-bot/conv-1/transcript", {
    token: tenant.platformKey,
  });
  if (early.status === 200) {
    const body = await early.json();
    expect(["processing", "complete"]).toContain(body.status);
  }

  const transcript = await waitFor(
    async () => {
      const r = await stack.platformRequest("/telemetry/otel/sessions/support-bot/conv-1/transcript", {
        token: tenant.platformKey,
      });
      if (r.status !== 200) return null;
      const body = await r.json();
      return body.status === "complete" ? body : null;
    },
    { what: "a complete transcript" },
  );
  expect(transcript.items.map((i: any) => [i.type, i.content])).toEqual([
    ["system", "You are a helpful support bot."],
    ["user", "My invoice is wrong"],
    ["assistant", "Sorry about that! Which invoice number?"],
  ]);
  expect(transcript.truncated).toBe(false);

  const info = await stack.nats.jsm.streams.info(stack.nats.topology.maturedStream);
  expect(info.state.messages).toBeGreaterThanOrEqual(1);
  const sessionMsg = await stack.nats.jsm.streams.getMessage(stack.nats.topology.maturedStream, {
    last_by_subj: subjects.matured(stack.nats.topology, "session", tenant.tenantId),
  });
  // A MATURED message may be a batch (trace maturations are: docs/maturation.md); read it as its maturations.
  const [matured] = maturationsOf(sessionMsg!.json<MaturedStreamMessage>());
  expect(matured).toMatchObject({
    type: "session.matured",
    sessionId: "conv-1",
    serviceName: "support-bot",
    maturationCount: 1,
    tenantId: tenant.tenantId,
  });
});
