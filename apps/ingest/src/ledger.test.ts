import { expect, test } from "bun:test";
import type { BuiltMessage } from "./batch-message.ts";
import { countedDoor } from "./ledger.ts";
import type { LedgerCounter } from "@cellar/shared/ledger/counter";

test("messages built on the offload thread are counted accepted at their receivedAt minute, not when their PubAck came", async () => {
  const added: Array<{ n: number; at: number | undefined }> = [];
  const ledger = {
    add: (_t: string, _s: string, _stage: string, _r: string, n: number, at?: number) => added.push({ n, at }),
  };
  // Handed to the thread at 10:00:59.990; built and stored after the minute turned.
  const receivedAt = "2026-11-29T10:00:59.990Z";
  const message: BuiltMessage = {
    messageId: "m1",
    tenantId: "t",
    receivedAt,
    data: new Uint8Array(),
    services: { shop: 500 },
  };
  const counted = countedDoor(
    {
      ledger: ledger as unknown as LedgerCounter,
      now: () => new Date("2026-11-29T10:01:00.020Z"),
      store: async () => ({ messageId: "x", duplicate: false }),
      storeBuilt: async (messages: BuiltMessage[]) =>
        messages.map((m) => ({ messageId: m.messageId, duplicate: false, services: m.services })),
    } as never,
    "otlp",
  );
  await counted.storeBuilt!([message]);
  expect(added).toEqual([{ n: 500, at: Date.parse(receivedAt) }]);
});
