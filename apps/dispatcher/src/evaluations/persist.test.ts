import { expect, test } from "bun:test";
import { whileTransient } from "./persist.ts";

const down = () => Object.assign(new Error("connect ECONNREFUSED 127.0.0.1:5432"), { code: "ECONNREFUSED" });
const noSleep = async () => {};

test("a step failing transiently (Postgres away) is run again until it succeeds", async () => {
  let calls = 0;
  const retried: number[] = [];
  const out = await whileTransient(
    async () => {
      if (++calls < 4) throw down();
      return "recorded";
    },
    { sleep: noSleep, onRetry: (_, attempt) => retried.push(attempt) },
  );
  expect(out).toBe("recorded");
  expect(calls).toBe(4);
  expect(retried).toEqual([0, 1, 2]);
});

test("any other failure is thrown at once, for the consume runtime to handle", async () => {
  let calls = 0;
  const bad = Object.assign(new Error("duplicate key"), { name: "PostgresError", code: "23502" });
  await expect(
    whileTransient(
      async () => {
        calls++;
        throw bad;
      },
      { sleep: noSleep },
    ),
  ).rejects.toBe(bad);
  expect(calls).toBe(1);
});

test("a transient failure that outlasts maxMs is thrown", async () => {
  let calls = 0;
  await expect(
    whileTransient(
      async () => {
        calls++;
        throw down();
      },
      { maxMs: 0, sleep: noSleep },
    ),
  ).rejects.toThrow("ECONNREFUSED");
  expect(calls).toBe(1);
});

test("a try that never answers (a query on a dropped connection) is abandoned and tried again", async () => {
  let calls = 0;
  const out = await whileTransient(
    () => (++calls === 1 ? new Promise<string>(() => {}) : Promise.resolve("recorded")),
    { stepTimeoutMs: 20, sleep: noSleep },
  );
  expect(out).toBe("recorded");
  expect(calls).toBe(2);
});
