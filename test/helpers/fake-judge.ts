/**
 * A model judge on 127.0.0.1 speaking OpenAI's chat completions (`/openai/v1/chat/completions`,
 * response_format json_schema) and Anthropic's messages (`/anthropic/v1/messages`, a forced tool
 * call). What it answers is chosen by the request's model name, `<behaviour>[:<arg>]`:
 * - `score:<value>` answers that score (JSON-parsed: 0.8, true, "good") with a reason;
 * - `retry-after:<s>` answers 429 with Retry-After the first time per conversation, then `score:1`;
 * - `slow:<s>` answers score 0.5 after that many seconds;
 * - `500` always answers 500; `401` answers 401; `hang` never answers;
 * - `not-json` answers content that is not JSON; `out-of-range` answers score 99;
 * - `huge` streams a body without end (2 GB); `redirect` answers 302 to a private address;
 * - `hang-once:<value>` never answers the first call per conversation, then answers that score;
 * - `garbage-once:<value>` answers 200 with bytes that are not JSON the first time, then the score.
 * Every request is kept (`calls`), with its parsed body and headers.
 */
export async function startFakeJudge() {
  const calls: Array<{ path: string; model: string; body: any; headers: Headers; at: number }> = [];
  const seen = new Map<string, number>();
  const server = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    idleTimeout: 0,
    async fetch(req) {
      const url = new URL(req.url);
      const body = (await req.json()) as any;
      const model = String(body.model ?? "");
      calls.push({ path: url.pathname, model, body, headers: req.headers, at: Date.now() });
      const anthropic = url.pathname.startsWith("/anthropic");
      const [behaviour, arg] = [model.split(":")[0], model.split(":").slice(1).join(":")];
      const convo = `${model}|${JSON.stringify(body.messages)}`;
      const n = (seen.get(convo) ?? 0) + 1;
      seen.set(convo, n);
      const answer = (score: unknown, reason = "judged by the fake judge") =>
        anthropic
          ? Response.json({
              id: "msg_1",
              type: "message",
              role: "assistant",
              model,
              content: [{ type: "tool_use", id: "tu_1", name: "record_evaluation", input: { score, reason } }],
              stop_reason: "tool_use",
              usage: { input_tokens: 1000, output_tokens: 50 },
            })
          : Response.json({
              id: "chatcmpl-1",
              object: "chat.completion",
              model,
              choices: [
                {
                  index: 0,
                  message: { role: "assistant", content: JSON.stringify({ score, reason }) },
                  finish_reason: "stop",
                },
              ],
              usage: { prompt_tokens: 1000, completion_tokens: 50, total_tokens: 1050 },
            });
      switch (behaviour) {
        case "score":
          return answer(JSON.parse(arg));
        case "retry-after":
          return n === 1 ? new Response("slow down", { status: 429, headers: { "retry-after": arg } }) : answer(1);
        case "slow":
          await Bun.sleep(Number(arg) * 1000);
          return answer(0.5);
        case "500":
          return new Response("boom", { status: 500 });
        case "401":
          return new Response("bad key", { status: 401 });
        case "hang":
          return new Promise<Response>(() => {});
        case "hang-once":
          return n === 1 ? new Promise<Response>(() => {}) : answer(JSON.parse(arg));
        case "garbage-once":
          return n === 1
            ? new Response(new Uint8Array([0xff, 0xfe, 0x00, 0x7b, 0x22, 0x9c]), {
                headers: { "content-type": "application/json" },
              })
            : answer(JSON.parse(arg));
        case "not-json":
          return anthropic
            ? Response.json({
                content: [{ type: "text", text: "I think it is fine" }],
                usage: { input_tokens: 10, output_tokens: 5 },
              })
            : Response.json({
                choices: [{ message: { role: "assistant", content: "I think it is fine" } }],
                usage: { prompt_tokens: 10, completion_tokens: 5 },
              });
        case "out-of-range":
          return answer(99);
        case "huge": {
          let sent = 0;
          const chunk = new Uint8Array(64 * 1024).fill(32);
          return new Response(
            new ReadableStream({
              pull(c) {
                if (sent >= 2 * 1024 ** 3) return c.close();
                sent += chunk.byteLength;
                c.enqueue(chunk);
              },
            }),
            { headers: { "content-type": "application/json" } },
          );
        }
        case "redirect":
          return new Response(null, { status: 302, headers: { location: "http://10.0.0.1/v1/chat/completions" } });
        default:
          return new Response("unknown behaviour", { status: 400 });
      }
    },
  });
  const base = `http://127.0.0.1:${server.port}`;
  return {
    calls,
    openaiUrl: `${base}/openai/v1/chat/completions`,
    anthropicUrl: `${base}/anthropic/v1/messages`,
    callsOf: (model: string) => calls.filter((c) => c.model === model),
    stop: () => server.stop(true),
  };
}
