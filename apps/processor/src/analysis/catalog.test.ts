import { expect, test } from "bun:test";
import { intentTokens, matchIntents } from "./catalog.ts";
import type { TranscriptItem } from "./transcript.ts";

const userItem = (text: string): TranscriptItem =>
  ({ id: "itm_1", type: "user", role: "user", content: text, timestamp: "2025-09-01T10:00:00.000Z" }) as TranscriptItem;

test("intent words are segmented in every script: no spaces (Thai, Chinese, Japanese), combining marks (Devanagari)", () => {
  expect([...intentTokens("ฉันต้องการคืนเงิน")]).toEqual(["ฉัน", "ต้องการ", "คืน", "เงิน"]);
  expect(intentTokens("我想退款我的订单")).toContain("退款");
  expect(intentTokens("返金をお願いします")).toContain("返金");
  expect([...intentTokens("मुझे रिफंड चाहिए")]).toEqual(["मुझे", "रिफंड", "चाहिए"]);
  expect([...intentTokens("Chcę zwrotu pieniędzy!")]).toEqual(["chce", "zwrotu", "pieniedzy"]);
});

test("an intent phrased in one script matches a message in that script", () => {
  const intents = [
    { id: "i1", name: "refund_th", description: "", examples: ["ต้องการคืนเงิน"] },
    { id: "i2", name: "refund_zh", description: "", examples: ["我想退款"] },
    { id: "i3", name: "refund_hi", description: "", examples: ["रिफंड चाहिए"] },
  ];
  expect(matchIntents([userItem("สวัสดี ฉันต้องการคืนเงินค่ะ")], intents).map((m) => m.name)).toEqual(["refund_th"]);
  expect(matchIntents([userItem("你好，我想退款，谢谢")], intents).map((m) => m.name)).toEqual(["refund_zh"]);
  expect(matchIntents([userItem("नमस्ते, मुझे रिफंड चाहिए")], intents).map((m) => m.name)).toEqual(["refund_hi"]);
});
