import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import fc from "fast-check";
import { createIngestFixture, type IngestFixture } from "../apps/ingest/test/fixture";
import { chatTrace } from "./helpers/payloads";

// The batch door against real NATS JetStream (apps/ingest/src/batch.ts; docs/sdks.md).
let fx: IngestFixture;
beforeAll(async () => {
  fx = await createIngestFixture({ maxBodyBytes: 256 * 1024 });
});
afterAll(() => fx.stop());

const trace = (sessionId: string) =>
  chatTrace({ sessionId, messages: [{ role: "user", content: "Hi" }], reply: "Hello." }) as Record<string, unknown>;
const event = (sessionId: string) => ({
  name: "checkout",
  service_name: "support-bot",
  session_id: sessionId,
  timestamp: new Date().toISOString(),
});

describe("POST /raw/batch", () => {
  test("every accepted item is in JetStream when the 200 comes, in one message; a retried batch is stored once", async () => {
    const before = await fx.stored();
    const body = {
      items: [
        { type: "trace", body: trace("b-1") },
        { type: "event", body: event("b-1") },
      ],
    };
    for (let attempt = 0; attempt < 2; attempt++) {
      const res = await fx.post("/raw/batch", body);
      expect(await res.json()).toEqual({ status: "success", items: [{ status: "accepted" }, { status: "accepted" }] });
      // One INGEST message per request (issue 36), holding both items.
      expect(await fx.stored()).toBe(before + 1);
      expect((await fx.last()).items.map((i: { kind: string }) => i.kind)).toEqual(["trace", "event"]);
    }
  });

  test("an item sent once alone and once in a batch has one id: the processor writes it once, by its natural key", async () => {
    const t = trace("b-2");
    expect((await fx.post("/raw/traces", t)).status).toBe(200);
    const single = await fx.last();
    const res = await fx.post("/raw/batch", { items: [{ type: "trace", body: t }] });
    expect((await res.json()).status).toBe("success");
    const batch = await fx.last();
    expect(batch.kind).toBe("batch");
    expect(batch.items[0].messageId).toBe(single.messageId);
  });

  test("a client DSN: CORS from an allowed origin, 403 from another, preflight answered", async () => {
    const dsn = await fx.key("dsn-client", { serviceName: "support-bot", origins: ["https://app.acme.test"] });
    const body = { items: [{ type: "event", body: event("b-3") }] };
    const ok = await fx.post("/raw/batch", body, {
      authorization: `Bearer ${dsn.key}`,
      origin: "https://app.acme.test",
    });
    expect(ok.status).toBe(200);
    expect(ok.headers.get("access-control-allow-origin")).toBe("https://app.acme.test");
    const other = await fx.post("/raw/batch", body, {
      authorization: `Bearer ${dsn.key}`,
      origin: "https://evil.test",
    });
    expect(other.status).toBe(403);
    expect((await other.json()).error).toContain("allowed origins");
    const preflight = await fx.app.handle(
      new Request("http://ingest.test/raw/batch", { method: "OPTIONS", headers: { origin: "https://app.acme.test" } }),
    );
    expect(preflight.status).toBe(204);
    expect(preflight.headers.get("access-control-allow-methods")).toContain("POST");
    const get = await fx.app.handle(new Request("http://ingest.test/raw/batch"));
    expect(get.status).toBe(405);
  });

  test("generated nasty batches: per-item or whole-batch answers in the contract's shape, nothing refused stored", async () => {
    let n = 0;
    const json = fc.jsonValue({ maxDepth: 3 });
    const validItem = fc
      .constantFrom("trace", "event")
      .map((type) => ({ type, body: type === "trace" ? trace(`fuzz-${++n}`) : event(`fuzz-${++n}`) }));
    // A valid body with one field deleted or replaced by arbitrary JSON.
    const brokenItem = fc
      .tuple(validItem, fc.string({ maxLength: 12 }), json, fc.boolean())
      .map(([item, k, v, del]) => {
        const body = item.body as Record<string, unknown>;
        const keys = Object.keys(body);
        const key = keys[k.length % keys.length];
        if (del) delete body[key];
        else body[key] = v;
        return item;
      });
    const junkItem = fc.oneof(
      json,
      fc.record({ type: fc.string({ maxLength: 8 }), body: json }),
      fc.record({ type: fc.constantFrom("trace", "event"), body: json }),
    );
    const items = fc.array(fc.oneof({ arbitrary: validItem, weight: 4 }, brokenItem, junkItem), {
      minLength: 0,
      maxLength: 12,
    });
    const envelope = fc.oneof({ arbitrary: items.map((i) => ({ items: i })), weight: 8 }, json);
    await fc.assert(
      fc.asyncProperty(envelope, async (batch) => {
        const before = await fx.stored();
        const res = await fx.post("/raw/batch", JSON.stringify(batch));
        const answer = (await res.json()) as any;
        const sent = (batch as { items?: Array<{ type: string; body: unknown }> })?.items;
        if (res.status === 200) {
          expect(answer.items.length).toBe(sent!.length);
          const accepted = new Set<string>();
          answer.items.forEach((a: any, i: number) => {
            if (a.status === "accepted") accepted.add(`${sent![i].type}\n${JSON.stringify(sent![i].body)}`);
            else expect(a).toEqual({ status: "refused", error: expect.stringMatching(/^(invalid body|body )/) });
          });
          const all = answer.items.every((a: any) => a.status === "accepted");
          expect(answer.status).toBe(all ? "success" : "partial");
          // The accepted items, all in one message (none when every item was refused).
          const count = answer.items.filter((a: any) => a.status === "accepted").length;
          expect(await fx.stored()).toBe(before + (count ? 1 : 0));
          if (count) {
            const stored = (await fx.last()).items.map(
              (i: { kind: string; payload: unknown }) => `${i.kind}\n${JSON.stringify(i.payload)}`,
            );
            expect(stored).toHaveLength(count);
            expect(new Set(stored).size).toBe(accepted.size);
          }
        } else {
          expect([400, 413]).toContain(res.status);
          expect(answer).toEqual({ error: expect.any(String) });
          expect(await fx.stored()).toBe(before);
        }
      }),
      { numRuns: 150 },
    );
  });
});
