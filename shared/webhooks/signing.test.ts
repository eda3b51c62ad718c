import { describe, expect, test } from "bun:test";
import fc from "fast-check";
import { Webhook } from "standardwebhooks";
import { deliveryHeaders, generateWebhookSecret, sign } from "./signing.ts";

const secretArb = fc
  .uint8Array({ minLength: 1, maxLength: 64 })
  .map((bytes) => `whsec_${Buffer.from(bytes).toString("base64")}`);

describe("native Standard Webhooks signing", () => {
  test("equals the standardwebhooks package's signature on generated secrets, ids, times and bodies", () => {
    fc.assert(
      fc.property(
        secretArb,
        fc.string({ unit: "binary", maxLength: 40 }),
        fc.integer({ min: 0, max: 4_102_444_800_000 }),
        fc.string({ unit: "binary", maxLength: 2000 }),
        (secret, id, ms, body) => {
          const at = new Date(ms);
          expect(sign(secret, id, at, body)).toBe(new Webhook(secret).sign(id, at, body));
        },
      ),
      { numRuns: 200 },
    );
  }, 120_000);

  test("a receiver using standardwebhooks verifies the headers, with one or two secrets", () => {
    const [current, previous] = [generateWebhookSecret(), generateWebhookSecret()];
    const body = JSON.stringify({ id: "msg_x", data: { text: "é ✓ 😀" } });
    const now = new Date();
    const headers = deliveryHeaders([current, previous], "msg_x", now, body);
    expect(headers["webhook-signature"].split(" ")).toHaveLength(2);
    expect(new Webhook(current).verify(body, headers)).toEqual(JSON.parse(body));
    expect(new Webhook(previous).verify(body, headers)).toEqual(JSON.parse(body));
    expect(() => new Webhook(generateWebhookSecret()).verify(body, headers)).toThrow();
    expect(() => new Webhook(current).verify(`${body} `, headers)).toThrow();
  });
});
