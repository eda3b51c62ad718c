import { expect, test } from "bun:test";
import { stableId } from "./spans.ts";

test("stableId keeps the FNV-1a 64-bit x2 values (ids already stored stay valid)", () => {
  // Reference values computed with the BigInt implementation it replaced.
  expect(stableId("")).toBe("cbf29ce48422232584222325cbf29ce4");
  expect(stableId("trace-1", "response", "0")).toBe("e0270a693588d02f2eb0a08c232cec74");
  expect(stableId("漢字é\uffff")).toBe("a7a91ea5ab950dd6fb6ac830689e8685");
});
