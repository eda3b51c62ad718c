import { expect, test } from "bun:test";
import fc from "fast-check";
import { Cellar } from "../src/index.ts";
import { DSN } from "./fake-ingest.ts";

// Whatever the ingest host answers, in whatever order: every item ends up counted exactly once
// (sent, refused or dropped), flush() resolves, nothing is thrown or left rejected, and a 4xx
// other than 408/429 is never retried.
type Answer = { status: number; retryAfter?: string; refuseEvery?: number } | "network-error" | "garbage";

const answer: fc.Arbitrary<Answer> = fc.oneof(
  fc.constant<Answer>("network-error"),
  fc.constant<Answer>("garbage"),
  fc.record({ status: fc.constantFrom(200, 200, 200, 400, 401, 403, 408, 413, 422, 429, 500, 502, 503) }),
  fc.record({
    status: fc.constantFrom(429, 503),
    retryAfter: fc.constantFrom("0", "bogus", "Wed, 21 Oct 2015 07:28:00 GMT"),
  }),
  fc.record({ status: fc.constant(200), refuseEvery: fc.integer({ min: 1, max: 4 }) }),
);

test("generated server behaviour: every item counted once, flush resolves, no other 4xx retried", async () => {
  let unhandled = 0;
  const onUnhandled = () => unhandled++;
  process.on("unhandledRejection", onUnhandled);
  await fc.assert(
    fc.asyncProperty(fc.array(answer, { maxLength: 30 }), fc.integer({ min: 1, max: 40 }), async (generated, items) => {
      const script = [...generated];
      const sentBodies: Array<{ body: string; status: number | null }> = [];
      const fetch = (async (_url: string, init: RequestInit) => {
        const body =
          typeof init.body === "string"
            ? init.body
            : await new Response(
                new Blob([init.body as BlobPart]).stream().pipeThrough(new DecompressionStream("gzip")),
              ).text();
        const n = JSON.parse(body).items.length;
        const step = script.shift() ?? { status: 200 };
        sentBodies.push({ body, status: typeof step === "string" ? null : step.status });
        if (step === "network-error") throw new TypeError("fetch failed");
        if (step === "garbage") return new Response("<html>", { status: 200 });
        const headers: Record<string, string> = step.retryAfter ? { "retry-after": step.retryAfter } : {};
        if (step.status !== 200) return Response.json({ error: "scripted" }, { status: step.status, headers });
        return Response.json({
          status: "partial",
          items: Array.from({ length: n }, (_, i) =>
            step.refuseEvery && i % step.refuseEvery === 0
              ? { status: "refused", error: "invalid body.x: no" }
              : { status: "accepted" },
          ),
        });
      }) as unknown as typeof globalThis.fetch;
      const cellar = new Cellar({
        dsn: DSN,
        fetch,
        serverless: true,
        maxBatchItems: 7,
        maxQueueItems: 30,
        maxRetries: 3,
        retryBaseMs: 1,
        retryMaxMs: 5,
      });
      for (let i = 0; i < items; i++) cellar.event({ name: "e", session_id: `s${i}` });
      const result = await cellar.flush({ timeoutMs: 20_000 });
      expect(result.pending).toBe(0);
      expect(result.sent + result.refused + result.dropped).toBe(items);
      // A batch answered with a 4xx other than 408/429 (413 splits it) is never sent again.
      sentBodies.forEach((b, i) => {
        if ([400, 401, 403, 422].includes(b.status ?? 0))
          expect(sentBodies.slice(i + 1).some((later) => later.body === b.body)).toBe(false);
      });
    }),
    { numRuns: 150 },
  );
  await Bun.sleep(5);
  process.off("unhandledRejection", onUnhandled);
  expect(unhandled).toBe(0);
}, 120_000);
