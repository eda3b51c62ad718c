/**
 * Fake OpenAI and Anthropic APIs (msw) for the SDK's proof tests, answering deterministically
 * from the request: a user turn gets two parallel tool calls (weather in two cities), tool
 * results get a final answer. Plain JSON or SSE streams, Chat Completions, the Responses API and
 * Anthropic Messages. Ids and usage are functions of the request, so a bare run and a wrapped
 * run of the same conversation get byte-identical answers.
 */
import { createHash } from "node:crypto";
import { http, HttpResponse } from "msw";

const digest = (v: unknown) => createHash("sha256").update(JSON.stringify(v)).digest("hex").slice(0, 16);
const tokens = (v: unknown) => Math.ceil(JSON.stringify(v).length / 4);
export const CITIES: Record<string, string> = { Paris: "18°C, sunny", Rome: "24°C, clear", Oslo: "4°C, snow" };
const pick = (v: unknown) => {
  const names = Object.keys(CITIES);
  const i = Number.parseInt(digest(v).slice(0, 4), 16) % names.length;
  return [names[i], names[(i + 1) % names.length]];
};
const answerText = (v: unknown) => `All done: ${digest(v).slice(0, 6)}. Pack accordingly.`;

function sse(events: Array<{ event?: string; data: unknown }>, done = false): HttpResponse<any> {
  const text =
    events.map((e) => `${e.event ? `event: ${e.event}\n` : ""}data: ${JSON.stringify(e.data)}\n\n`).join("") +
    (done ? "data: [DONE]\n\n" : "");
  return new HttpResponse(text, { headers: { "content-type": "text/event-stream" } });
}

/** Chat Completions: the last message decides (user: tool calls; tool: the answer). */
async function chat({ request }: { request: Request }) {
  const body = await request.json();
  const last = body.messages[body.messages.length - 1];
  const id = `chatcmpl-${digest(body)}`;
  const usage = { prompt_tokens: tokens(body.messages), completion_tokens: 0, total_tokens: 0 };
  let message: any;
  let finish: string;
  if (last.role === "user") {
    message = {
      role: "assistant",
      content: null,
      tool_calls: pick(body).map((city, i) => ({
        id: `call_${digest([body, i])}`,
        type: "function",
        function: { name: "get_weather", arguments: JSON.stringify({ city }) },
      })),
    };
    finish = "tool_calls";
  } else {
    message = { role: "assistant", content: answerText(body) };
    finish = "stop";
  }
  usage.completion_tokens = tokens(message);
  usage.total_tokens = usage.prompt_tokens + usage.completion_tokens;
  const model = `${body.model}-2024-07-18`;
  if (!body.stream)
    return HttpResponse.json({
      id,
      object: "chat.completion",
      created: 1_760_000_000,
      model,
      choices: [{ index: 0, message: { refusal: null, ...message }, finish_reason: finish, logprobs: null }],
      usage,
    });
  const chunk = (delta: any, finish_reason: string | null = null, extra = {}) => ({
    data: {
      id,
      object: "chat.completion.chunk",
      created: 1_760_000_000,
      model,
      choices: [{ index: 0, delta, finish_reason }],
      ...extra,
    },
  });
  const events: Array<{ data: unknown }> = [
    chunk({ role: "assistant", content: message.content === null ? null : "" }),
  ];
  if (message.content) for (const part of message.content.match(/.{1,7}/g)) events.push(chunk({ content: part }));
  for (const [index, call] of (message.tool_calls ?? []).entries()) {
    events.push(
      chunk({
        tool_calls: [{ index, id: call.id, type: "function", function: { name: call.function.name, arguments: "" } }],
      }),
    );
    for (const part of call.function.arguments.match(/.{1,5}/g))
      events.push(chunk({ tool_calls: [{ index, function: { arguments: part } }] }));
  }
  events.push(chunk({}, finish));
  if (body.stream_options?.include_usage)
    events.push({ data: { id, object: "chat.completion.chunk", created: 1_760_000_000, model, choices: [], usage } });
  return sse(events, true);
}

/** Responses API: a function_call_output last means answer, else two function calls. */
async function responses({ request }: { request: Request }) {
  const body = await request.json();
  const input = Array.isArray(body.input) ? body.input : [{ role: "user", content: body.input }];
  const answer = input[input.length - 1]?.type === "function_call_output";
  const id = `resp_${digest(body)}`;
  const output = answer
    ? [
        {
          id: `msg_${digest(body)}`,
          type: "message",
          role: "assistant",
          status: "completed",
          content: [{ type: "output_text", text: answerText(body), annotations: [] }],
        },
      ]
    : pick(body).map((city, i) => ({
        id: `fc_${digest([body, i])}`,
        type: "function_call",
        status: "completed",
        call_id: `call_${digest([body, i])}`,
        name: "get_weather",
        arguments: JSON.stringify({ city }),
      }));
  const input_tokens = tokens(input);
  const output_tokens = tokens(output);
  const response = {
    id,
    object: "response",
    created_at: 1_760_000_000,
    status: "completed",
    model: `${body.model}-2025-04-14`,
    output,
    usage: {
      input_tokens,
      input_tokens_details: { cached_tokens: 0 },
      output_tokens,
      output_tokens_details: { reasoning_tokens: 0 },
      total_tokens: input_tokens + output_tokens,
    },
  };
  if (!body.stream) return HttpResponse.json(response);
  const events: Array<{ event: string; data: any }> = [
    {
      event: "response.created",
      data: {
        type: "response.created",
        sequence_number: 0,
        response: { ...response, status: "in_progress", output: [] },
      },
    },
  ];
  if (answer)
    for (const part of answerText(body).match(/.{1,9}/g)!)
      events.push({
        event: "response.output_text.delta",
        data: {
          type: "response.output_text.delta",
          delta: part,
          output_index: 0,
          content_index: 0,
          item_id: output[0].id,
          sequence_number: events.length,
        },
      });
  events.push({
    event: "response.completed",
    data: { type: "response.completed", sequence_number: events.length, response },
  });
  return sse(events);
}

/** Anthropic Messages: tool_result blocks last mean answer, else two tool_use blocks. */
async function messages({ request }: { request: Request }) {
  const body = await request.json();
  const last = body.messages[body.messages.length - 1];
  const answer = Array.isArray(last.content) && last.content.some((b: any) => b.type === "tool_result");
  const content = answer
    ? [{ type: "text", text: answerText(body) }]
    : pick(body).map((city, i) => ({
        type: "tool_use",
        id: `toolu_${digest([body, i])}`,
        name: "get_weather",
        input: { city },
      }));
  const usage = {
    input_tokens: tokens(body.messages),
    output_tokens: tokens(content),
    cache_creation_input_tokens: 0,
    cache_read_input_tokens: 7,
  };
  const message = {
    id: `msg_${digest(body)}`,
    type: "message",
    role: "assistant",
    model: "claude-sonnet-4-20250514",
    content,
    stop_reason: answer ? "end_turn" : "tool_use",
    stop_sequence: null,
    usage,
  };
  if (!body.stream) return HttpResponse.json(message);
  const ev = (type: string, data: any) => ({ event: type, data: { type, ...data } });
  const events = [
    ev("message_start", {
      message: { ...message, content: [], stop_reason: null, usage: { ...usage, output_tokens: 1 } },
    }),
  ];
  content.forEach((block: any, index: number) => {
    if (block.type === "text") {
      events.push(ev("content_block_start", { index, content_block: { type: "text", text: "" } }));
      for (const part of block.text.match(/.{1,8}/g))
        events.push(ev("content_block_delta", { index, delta: { type: "text_delta", text: part } }));
    } else {
      events.push(
        ev("content_block_start", {
          index,
          content_block: { type: "tool_use", id: block.id, name: block.name, input: {} },
        }),
      );
      for (const part of JSON.stringify(block.input).match(/.{1,4}/g)!)
        events.push(ev("content_block_delta", { index, delta: { type: "input_json_delta", partial_json: part } }));
    }
    events.push(ev("content_block_stop", { index }));
  });
  events.push(
    ev("message_delta", {
      delta: { stop_reason: message.stop_reason, stop_sequence: null },
      usage: { output_tokens: usage.output_tokens },
    }),
  );
  events.push(ev("message_stop", {}));
  return sse(events);
}

export const providerHandlers = [
  http.post("https://api.openai.com/v1/chat/completions", chat),
  http.post("https://api.openai.com/v1/responses", responses),
  http.post("https://api.anthropic.com/v1/messages", messages),
];
