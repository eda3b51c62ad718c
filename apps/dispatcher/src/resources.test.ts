import { expect, test } from "bun:test";
import type { SecretBox } from "@cellar/shared/crypto";
import { cachedSecretOpener } from "./resources.ts";

test("a sealed secret is opened once per subscription and ciphertext; a failed open is tried again next time", async () => {
  const opened: string[] = [];
  let broken = true;
  const box = {
    open: async (sealed: string, subscriptionId: string) => {
      opened.push(`${subscriptionId}|${sealed}`);
      if (sealed === "flaky" && broken) throw new Error("no key opens it");
      return `plain-${sealed}`;
    },
  } as unknown as SecretBox;
  const open = cachedSecretOpener(box);
  expect(await open("a", "s1")).toBe("plain-a");
  expect(await open("a", "s1")).toBe("plain-a");
  expect(await open("a", "s2")).toBe("plain-a"); // the subscription id is the associated data
  expect(await open("b", "s1")).toBe("plain-b"); // a rotated secret is a new ciphertext
  expect(opened).toEqual(["s1|a", "s2|a", "s1|b"]);
  await expect(open("flaky", "s1")).rejects.toThrow("no key opens it");
  await new Promise((r) => setTimeout(r, 0));
  broken = false;
  expect(await open("flaky", "s1")).toBe("plain-flaky");
});
