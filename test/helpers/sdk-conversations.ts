/**
 * Tool-loop conversations driven through the real `openai` and `@anthropic-ai/sdk` clients (bare
 * or wrapped by cellar-sdk), against the fake APIs of sdk-providers.ts. Each returns what every
 * call returned (streams as their chunk lists), the transcript the platform should show, and the
 * usage the bare responses reported.
 */
import { CITIES } from "./sdk-providers";

export type Style = "chat" | "chat-stream" | "responses" | "responses-stream" | "anthropic" | "anthropic-stream";
export const STYLES: Style[] = [
  "chat",
  "chat-stream",
  "responses",
  "responses-stream",
  "anthropic",
  "anthropic-stream",
];
const SYSTEM = "You are a travel assistant.";
const QUESTIONS = ["What's the weather in two cities?", "And again, please?"];

export interface Usage {
  model: string;
  promptTokens: number;
  completionTokens: number;
  cachedTokens: number;
}
export interface Conversation {
  returned: unknown[];
  transcript: Array<[string, string]>;
  usage: Usage[];
}

async function collect(stream: AsyncIterable<unknown>): Promise<any[]> {
  const chunks: any[] = [];
  for await (const c of stream) chunks.push(c);
  return chunks;
}
const plain = (v: unknown) => JSON.parse(JSON.stringify(v));

export async function converse(style: Style, clients: { openai: any; anthropic: any }): Promise<Conversation> {
  const out: Conversation = { returned: [], transcript: [["system", SYSTEM]], usage: [] };
  const calls = (list: Array<{ id: string; name: string; args: string }>) => {
    for (const c of list) out.transcript.push(["tool_call", c.args]);
    for (const c of list) out.transcript.push(["tool_result", CITIES[JSON.parse(c.args).city]]);
  };
  if (style === "chat" || style === "chat-stream") {
    const messages: any[] = [{ role: "system", content: SYSTEM }];
    for (const q of QUESTIONS) {
      messages.push({ role: "user", content: q });
      out.transcript.push(["user", q]);
      for (;;) {
        const params = { model: "gpt-4o-mini", messages, tools: TOOLS_CHAT };
        let msg: any;
        if (style === "chat") {
          const res = await clients.openai.chat.completions.create(params);
          out.returned.push(plain(res));
          out.usage.push({
            model: res.model,
            promptTokens: res.usage.prompt_tokens,
            completionTokens: res.usage.completion_tokens,
            cachedTokens: 0,
          });
          msg = res.choices[0].message;
        } else {
          const chunks = await collect(
            await clients.openai.chat.completions.create({
              ...params,
              stream: true,
              stream_options: { include_usage: true },
            }),
          );
          out.returned.push(plain(chunks));
          const usage = chunks.find((c) => c.usage).usage;
          out.usage.push({
            model: chunks[0].model,
            promptTokens: usage.prompt_tokens,
            completionTokens: usage.completion_tokens,
            cachedTokens: 0,
          });
          msg = { role: "assistant", content: chunks.map((c) => c.choices[0]?.delta?.content ?? "").join("") || null };
          const tools: any[] = [];
          for (const c of chunks)
            for (const t of c.choices[0]?.delta?.tool_calls ?? []) {
              tools[t.index] ??= { id: t.id, type: "function", function: { name: t.function.name, arguments: "" } };
              if (!t.id) tools[t.index].function.arguments += t.function.arguments;
            }
          if (tools.length) msg.tool_calls = tools;
        }
        messages.push({
          role: "assistant",
          content: msg.content,
          ...(msg.tool_calls ? { tool_calls: msg.tool_calls } : {}),
        });
        if (!msg.tool_calls?.length) {
          out.transcript.push(["assistant", msg.content]);
          break;
        }
        calls(msg.tool_calls.map((t: any) => ({ id: t.id, name: t.function.name, args: t.function.arguments })));
        for (const t of msg.tool_calls)
          messages.push({ role: "tool", tool_call_id: t.id, content: CITIES[JSON.parse(t.function.arguments).city] });
      }
    }
  } else if (style === "responses" || style === "responses-stream") {
    const input: any[] = [];
    for (const q of QUESTIONS) {
      input.push({ role: "user", content: q });
      out.transcript.push(["user", q]);
      for (;;) {
        const params = { model: "gpt-4.1-mini", instructions: SYSTEM, input: [...input], tools: TOOLS_RESPONSES };
        let res: any;
        if (style === "responses") {
          res = await clients.openai.responses.create(params);
          out.returned.push(plain(res));
        } else {
          const events = await collect(await clients.openai.responses.create({ ...params, stream: true }));
          out.returned.push(plain(events));
          res = events.find((e) => e.type === "response.completed").response;
        }
        out.usage.push({
          model: res.model,
          promptTokens: res.usage.input_tokens,
          completionTokens: res.usage.output_tokens,
          cachedTokens: 0,
        });
        const fcs = res.output.filter((o: any) => o.type === "function_call");
        if (!fcs.length) {
          const text = res.output[0].content[0].text;
          input.push({ role: "assistant", content: text });
          out.transcript.push(["assistant", text]);
          break;
        }
        calls(fcs.map((f: any) => ({ id: f.call_id, name: f.name, args: f.arguments })));
        for (const f of fcs)
          input.push({ type: "function_call", call_id: f.call_id, name: f.name, arguments: f.arguments });
        for (const f of fcs)
          input.push({
            type: "function_call_output",
            call_id: f.call_id,
            output: CITIES[JSON.parse(f.arguments).city],
          });
      }
    }
  } else {
    const messages: any[] = [];
    for (const q of QUESTIONS) {
      messages.push({ role: "user", content: q });
      out.transcript.push(["user", q]);
      for (;;) {
        const params = {
          model: "claude-sonnet-4-20250514",
          max_tokens: 512,
          system: SYSTEM,
          messages,
          tools: TOOLS_ANTHROPIC,
        };
        let msg: any;
        if (style === "anthropic") {
          msg = await clients.anthropic.messages.create(params);
          out.returned.push(plain(msg));
        } else {
          const events = await collect(await clients.anthropic.messages.create({ ...params, stream: true }));
          out.returned.push(plain(events));
          const start = events.find((e) => e.type === "message_start").message;
          const blocks: any[] = [];
          for (const e of events) {
            if (e.type === "content_block_start") blocks[e.index] = { ...e.content_block, json: "" };
            if (e.type === "content_block_delta" && e.delta.type === "text_delta") blocks[e.index].text += e.delta.text;
            if (e.type === "content_block_delta" && e.delta.type === "input_json_delta")
              blocks[e.index].json += e.delta.partial_json;
          }
          const delta = events.find((e) => e.type === "message_delta");
          msg = {
            ...start,
            content: blocks.map(({ json, ...b }) => (b.type === "tool_use" ? { ...b, input: JSON.parse(json) } : b)),
            usage: { ...start.usage, output_tokens: delta.usage.output_tokens },
          };
        }
        const u = msg.usage;
        out.usage.push({
          model: msg.model,
          promptTokens: u.input_tokens + (u.cache_read_input_tokens ?? 0) + (u.cache_creation_input_tokens ?? 0),
          completionTokens: u.output_tokens,
          cachedTokens: u.cache_read_input_tokens ?? 0,
        });
        messages.push({ role: "assistant", content: msg.content });
        const uses = msg.content.filter((b: any) => b.type === "tool_use");
        if (!uses.length) {
          out.transcript.push(["assistant", msg.content[0].text]);
          break;
        }
        calls(uses.map((b: any) => ({ id: b.id, name: b.name, args: JSON.stringify(b.input) })));
        messages.push({
          role: "user",
          content: uses.map((b: any) => ({ type: "tool_result", tool_use_id: b.id, content: CITIES[b.input.city] })),
        });
      }
    }
  }
  return out;
}

const WEATHER = { type: "object", properties: { city: { type: "string" } }, required: ["city"] };
const TOOLS_CHAT = [
  { type: "function", function: { name: "get_weather", description: "Current weather", parameters: WEATHER } },
];
const TOOLS_RESPONSES = [
  { type: "function", name: "get_weather", description: "Current weather", parameters: WEATHER, strict: false },
];
const TOOLS_ANTHROPIC = [{ name: "get_weather", description: "Current weather", input_schema: WEATHER }];
