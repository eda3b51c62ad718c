/**
 * `observeOpenAI(client, cellar, { sessionId })`: the official `openai` client, unchanged, whose
 * chat.completions.create (plain, streaming, tool calls, parallel tool calls) and responses.create
 * (plain and streaming) also queue one trace per call in the contract's shape (OpenAI chat).
 * No import of `openai` itself: any client with that shape works.
 */

import type { Cellar, CellarOptions } from "./index.ts";
import { cellarOf, proxyMethod, traced, type WrapOptions, watchResult, watchStream } from "./observe.ts";
import type { ChatMessage, ProviderResponse } from "./types.ts";

export type { WrapOptions } from "./observe.ts";

/** `cellar`: a `Cellar` (to flush it, or send your own traces too), or the options to make one. */
export function observeOpenAI<T extends object>(
  client: T,
  cellarOrOptions: Cellar | CellarOptions,
  options: WrapOptions,
): T {
  const cellar = cellarOf(cellarOrOptions);
  const chat = proxyMethod(client, ["chat", "completions", "create"], (original, owner) =>
    traced(cellar, options, original, owner, observeChat),
  );
  return proxyMethod(chat, ["responses", "create"], (original, owner) =>
    traced(cellar, options, original, owner, observeResponses),
  );
}

/** The request as sent: its message list copied now, so a caller appending to it later changes nothing. */
const snapshot = (params: any, key: string) =>
  Array.isArray(params?.[key]) ? { ...params, [key]: params[key].slice() } : { ...params };

function observeChat(params: any, result: unknown, emit: (t: any) => void): void {
  const request = snapshot(params, "messages");
  const done = (response: ProviderResponse) => emit({ request, responses: [response], end_time: new Date() });
  if (!params?.stream) {
    watchResult(result, done);
    return;
  }
  watchResult(result, (stream) => {
    const acc = chatAccumulator();
    watchStream(stream, acc.add, () => done(acc.result()));
  });
}

/** A streamed chat completion put back together: what the non-streaming call would have returned. */
export function chatAccumulator() {
  let head: any = null;
  let usage: any = null;
  let tier: string | null = null;
  const choices = new Map<
    number,
    { role: string; content: string[]; refusal: string[]; tools: Map<number, any>; finish: any }
  >();
  return {
    add(chunk: any) {
      head ??= chunk;
      if (chunk.usage) usage = chunk.usage;
      // Every chunk names the tier; the last one says which served the call (the price depends on it).
      if (typeof chunk.service_tier === "string") tier = chunk.service_tier;
      for (const c of chunk.choices ?? []) {
        let choice = choices.get(c.index);
        if (!choice)
          choices.set(
            c.index,
            (choice = { role: "assistant", content: [], refusal: [], tools: new Map(), finish: null }),
          );
        const d = c.delta ?? {};
        if (d.role) choice.role = d.role;
        if (typeof d.content === "string") choice.content.push(d.content);
        if (typeof d.refusal === "string") choice.refusal.push(d.refusal);
        for (const t of d.tool_calls ?? []) {
          let call = choice.tools.get(t.index);
          if (!call)
            choice.tools.set(
              t.index,
              (call = { id: t.id, type: t.type ?? "function", function: { name: "", arguments: "" } }),
            );
          if (t.id) call.id = t.id;
          if (t.function?.name) call.function.name += t.function.name;
          if (t.function?.arguments) call.function.arguments += t.function.arguments;
        }
        if (c.finish_reason) choice.finish = c.finish_reason;
      }
    },
    result(): ProviderResponse {
      return {
        id: head?.id ?? "unknown",
        object: "chat.completion",
        created: head?.created,
        model: head?.model ?? "unknown",
        ...(head?.system_fingerprint ? { system_fingerprint: head.system_fingerprint } : {}),
        ...(tier ? { service_tier: tier } : {}),
        choices: [...choices.entries()]
          .sort(([a], [b]) => a - b)
          .map(([index, c]) => {
            const message: ChatMessage = { role: c.role, content: c.content.length ? c.content.join("") : null };
            if (c.refusal.length) message.refusal = c.refusal.join("");
            if (c.tools.size) message.tool_calls = [...c.tools.entries()].sort(([a], [b]) => a - b).map(([, t]) => t);
            return { index, message, finish_reason: c.finish };
          }),
        // Without stream_options.include_usage the stream carries no usage: zeros, marked as missing.
        usage: usage ?? { prompt_tokens: 0, completion_tokens: 0, total_tokens: 0, usage_missing: true },
      };
    },
  };
}

function observeResponses(params: any, result: unknown, emit: (t: any) => void): void {
  const request = responsesRequest(params);
  const done = (response: any) => {
    if (response?.object === "response")
      emit({ request, responses: [responseAsCompletion(response)], end_time: new Date() });
  };
  if (!params?.stream) {
    watchResult(result, done);
    return;
  }
  watchResult(result, (stream) => {
    let final: any = null;
    watchStream(
      stream,
      (event) => {
        if (event?.response && /^response\.(completed|incomplete|failed)$/.test(event.type)) final = event.response;
      },
      () => done(final),
    );
  });
}

const text = (content: any): any =>
  typeof content === "string"
    ? content
    : Array.isArray(content)
      ? content.map((p: any) =>
          p?.type === "input_text" || p?.type === "output_text" ? { type: "text", text: p.text } : p,
        )
      : content;

/** A Responses API request in the chat shape: instructions, then input items as messages; the original fields kept. */
export function responsesRequest(params: any): any {
  const messages: ChatMessage[] = [];
  if (typeof params?.instructions === "string") messages.push({ role: "system", content: params.instructions });
  const input = params?.input;
  if (typeof input === "string") messages.push({ role: "user", content: input });
  for (const item of Array.isArray(input) ? input : []) {
    if (item?.type === "function_call") {
      const call = { id: item.call_id, type: "function", function: { name: item.name, arguments: item.arguments } };
      const last = messages[messages.length - 1];
      if (last?.role === "assistant" && Array.isArray(last.tool_calls)) (last.tool_calls as unknown[]).push(call);
      else messages.push({ role: "assistant", content: null, tool_calls: [call] });
    } else if (item?.type === "function_call_output") {
      messages.push({ role: "tool", tool_call_id: item.call_id, content: String(item.output ?? "") });
    } else if (item && typeof item.role === "string") {
      messages.push({ role: item.role === "developer" ? "system" : item.role, content: text(item.content) });
    }
  }
  const { input: _input, instructions: _instructions, ...rest } = params ?? {};
  const out: any = { ...rest, messages, api: "responses" };
  if (Array.isArray(params?.tools))
    out.tools = params.tools.map((t: any) =>
      t?.type === "function"
        ? { type: "function", function: { name: t.name, description: t.description, parameters: t.parameters } }
        : t,
    );
  return out;
}

/** A Responses API response in the chat completion shape the contract's trace carries. */
export function responseAsCompletion(r: any): ProviderResponse {
  const texts: string[] = [];
  const calls: unknown[] = [];
  for (const item of r.output ?? []) {
    if (item?.type === "message")
      for (const part of item.content ?? []) {
        if (part?.type === "output_text") texts.push(part.text);
        else if (part?.type === "refusal") texts.push(part.refusal);
      }
    else if (item?.type === "function_call")
      calls.push({ id: item.call_id, type: "function", function: { name: item.name, arguments: item.arguments } });
  }
  const message: ChatMessage = { role: "assistant", content: texts.length ? texts.join("") : null };
  if (calls.length) message.tool_calls = calls;
  const u = r.usage ?? {};
  return {
    id: r.id,
    object: "chat.completion",
    created: r.created_at,
    model: r.model,
    choices: [
      {
        index: 0,
        message,
        finish_reason: calls.length ? "tool_calls" : r.status === "incomplete" ? "length" : "stop",
      },
    ],
    usage: {
      prompt_tokens: u.input_tokens ?? 0,
      completion_tokens: u.output_tokens ?? 0,
      total_tokens: u.total_tokens ?? (u.input_tokens ?? 0) + (u.output_tokens ?? 0),
      ...(u.input_tokens_details?.cached_tokens !== undefined
        ? { prompt_tokens_details: { cached_tokens: u.input_tokens_details.cached_tokens } }
        : {}),
      ...(u.output_tokens_details?.reasoning_tokens !== undefined
        ? { completion_tokens_details: { reasoning_tokens: u.output_tokens_details.reasoning_tokens } }
        : {}),
    },
    source_object: "response",
    status: r.status,
    // The tier that served the call (`default`, `flex`, `priority`...), which the price depends on.
    ...(typeof r.service_tier === "string" ? { service_tier: r.service_tier } : {}),
  };
}
