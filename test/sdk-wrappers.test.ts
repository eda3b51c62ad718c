import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import Anthropic from "@anthropic-ai/sdk";
import OpenAI from "openai";
import { http, HttpResponse } from "msw";
import { setupServer } from "msw/node";
import { traceProblem } from "@cellar/shared/ingest-rules";
import { Cellar } from "../sdks/typescript/src/index";
import { observeAnthropic } from "../sdks/typescript/src/anthropic";
import { observeOpenAI } from "../sdks/typescript/src/openai";
import { DSN, fakeIngest } from "../sdks/typescript/test/fake-ingest";
import { converse, STYLES } from "./helpers/sdk-conversations";
import { providerHandlers } from "./helpers/sdk-providers";

// The wrappers in one process, the real openai and @anthropic-ai/sdk clients against msw: a
// wrapped call returns exactly what the bare one does, and queues one valid trace per call.
const msw = setupServer(
  ...providerHandlers,
  http.get("https://api.openai.com/v1/models/:id", () =>
    HttpResponse.json(
      { error: { message: "The model does not exist", type: "invalid_request_error" } },
      { status: 404 },
    ),
  ),
);
beforeAll(() => msw.listen({ onUnhandledRequest: "error" }));
afterAll(() => msw.close());

const bare = () => ({
  openai: new OpenAI({ apiKey: "sk-test", maxRetries: 0 }),
  anthropic: new Anthropic({ apiKey: "sk-ant-test", maxRetries: 0 }),
});

function wrapped(sessionId: string) {
  const ingest = fakeIngest();
  const cellar = new Cellar({ dsn: DSN, fetch: ingest.fetch, serverless: true });
  const b = bare();
  return {
    cellar,
    ingest,
    clients: {
      openai: observeOpenAI(b.openai, cellar, { sessionId }),
      anthropic: observeAnthropic(b.anthropic, cellar, { sessionId }),
    },
  };
}

describe("provider wrappers", () => {
  for (const style of STYLES) {
    test(`${style}: same returns as the bare client, one valid trace per call`, async () => {
      const expected = await converse(style, bare());
      const w = wrapped(`w-${style}`);
      const got = await converse(style, w.clients);
      expect(got.returned).toEqual(expected.returned);
      await w.cellar.flush();
      const traces = w.ingest.items().map((i) => i.body);
      expect(traces.length).toBe(expected.usage.length);
      for (const [i, t] of traces.entries()) {
        expect(traceProblem(structuredClone(t))).toBeNull();
        expect(t.session_id).toBe(`w-${style}`);
        expect(t.responses[0].usage).toMatchObject({
          prompt_tokens: expected.usage[i].promptTokens,
          completion_tokens: expected.usage[i].completionTokens,
        });
      }
    });
  }

  test("the wrapped client keeps the client's own objects, helpers and errors", async () => {
    const w = wrapped("objects");
    const p = w.clients.openai.chat.completions.create({
      model: "gpt-4o-mini",
      messages: [{ role: "user", content: "Hi" }],
    });
    expect(typeof (p as any).withResponse).toBe("function");
    const { data, response } = await (p as any).withResponse();
    expect(response.status).toBe(200);
    expect(data.object).toBe("chat.completion");
    const stream = await w.clients.openai.chat.completions.create({
      model: "gpt-4o-mini",
      messages: [{ role: "user", content: "Hi" }],
      stream: true,
    });
    expect(stream.constructor.name).toBe("Stream");
    const [a, b] = stream.tee();
    expect((await Array.fromAsync(a)).length).toBe((await Array.fromAsync(b)).length);
    const error = await w.clients.openai.models.retrieve("nope").catch((e: unknown) => e);
    expect(error).toBeInstanceOf(OpenAI.APIError);
    const bareError = await bare()
      .openai.models.retrieve("nope")
      .catch((e: unknown) => e);
    expect((error as Error).message).toBe((bareError as Error).message);
    await w.cellar.flush();
    expect(w.ingest.items().length).toBe(2);
  });
});
