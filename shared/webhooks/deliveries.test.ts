import { expect, test } from "bun:test";
import fc from "fast-check";
import { deliveryBody, deliveryBodyParts, newDeliveryId, newDeliveryIds } from "./deliveries.ts";

test("head + id + tail is deliveryBody byte for byte, whatever the event's data holds", () => {
  const text = fc.string({ unit: "binary", maxLength: 60 });
  fc.assert(
    fc.property(
      fc.record({
        tenant_id: text,
        trace_service_id: text,
        service_name: text,
        maturation_count: fc.integer({ min: 1, max: 1_000_000 }),
        occurred_at: text,
        session_id: fc.option(text, { nil: undefined }),
        trace_id: fc.option(text, { nil: undefined }),
      }),
      fc.constantFrom("session.matured" as const, "trace.matured" as const),
      fc.integer({ min: 0, max: 4_102_444_800_000 }),
      (data, type, ms) => {
        const timestamp = new Date(ms);
        const id = newDeliveryId();
        const { head, tail } = deliveryBodyParts({ type, timestamp, data });
        expect(head + id + tail).toBe(deliveryBody({ id, type, timestamp, data }));
      },
    ),
  );
  // The marker itself in the data does not move the id's place.
  const data = {
    tenant_id: "\u0000id\u0000",
    trace_service_id: "s",
    service_name: '"\u0000id\u0000"',
    maturation_count: 1,
    occurred_at: "x",
  };
  const { head, tail } = deliveryBodyParts({ type: "trace.matured", timestamp: new Date(0), data });
  expect(`${head}msg_a${tail}`).toBe(
    deliveryBody({ id: "msg_a", type: "trace.matured", timestamp: new Date(0), data }),
  );
});

test("ids drawn together have newDeliveryId's form and are all different", () => {
  const ids = newDeliveryIds(5000);
  const form = /^msg_[A-Za-z0-9_-]{24}$/;
  expect(ids.every((id) => form.test(id))).toBe(true);
  expect(form.test(newDeliveryId())).toBe(true);
  expect(new Set(ids).size).toBe(ids.length);
  // Every byte reaches its id: the 64 characters of base64url all occur in the random part.
  expect(new Set(ids.map((id) => id.slice(12)).join("")).size).toBe(64);
});

test("ids sort by their creation time, byte for byte and under a linguistic collation", () => {
  const times = [0, 1, 35, 36, 1_795_300_000_000, 1_795_300_000_001, 1_795_300_001_000, 2_800_000_000_000];
  const ids = times.map((t) => newDeliveryId(t));
  for (const id of ids) expect(id).toMatch(/^msg_[0-9a-z]{8}[A-Za-z0-9_-]{16}$/);
  // Byte order (the C collation) and a linguistic one (case and punctuation ignored first) agree.
  const bytewise = [...ids].reverse().sort();
  const linguistic = [...ids].reverse().sort(new Intl.Collator("en").compare);
  expect(bytewise).toEqual(ids);
  expect(linguistic).toEqual(ids);
  // Within one millisecond the random part decides; a later millisecond always sorts after.
  const batch = newDeliveryIds(100, 1_795_300_000_000);
  const later = newDeliveryIds(100, 1_795_300_000_001);
  expect([...later, ...batch].sort().slice(100)).toEqual([...later].sort());
});
