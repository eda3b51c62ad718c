/**
 * `observeAnthropic(client, cellar, { sessionId })`: the official `@anthropic-ai/sdk` client,
 * unchanged, whose messages.create (plain and streaming, tool use included) also queues one trace
 * per call, mapped into the contract's shape (OpenAI chat: system and tool results become
 * messages, tool_use blocks become tool_calls, usage counted the OpenAI way: prompt tokens include
 * cache reads and writes, as shared/otlp/usage.ts normalises Anthropic's OTLP usage).
 */

import type { Cellar, CellarOptions } from "./index.ts";
import { cellarOf, proxyMethod, traced, type WrapOptions, watchResult, watchStream } from "./observe.ts";
import type { ChatMessage, ProviderResponse } from "./types.ts";

/** `cellar`: a `Cellar` (to flush it, or send your own traces too), or the options to make one. */
export function observeAnthropic<T extends object>(
  client: T,
  cellarOrOptions: Cellar | CellarOptions,
  options: WrapOptions,
): T {
  const cellar = cellarOf(cellarOrOptions);
  return proxyMethod(client, ["messages", "create"], (original, owner) =>
    traced(cellar, options, original, owner, observeMessages),
  );
}

function observeMessages(params: any, result: unknown, emit: (t: any) => void): void {
  const request = anthropicRequest(params);
  const done = (message: any) => {
    if (message?.type === "message") emit({ request, responses: [messageAsCompletion(message)], end_time: new Date() });
  };
  if (!params?.stream) {
    watchResult(result, done);
    return;
  }
  watchResult(result, (stream) => {
    const acc = messageAccumulator();
    watchStream(stream, acc.add, () => done(acc.result()));
  });
}

const blockText = (content: any): string =>
  typeof content === "string"
    ? content
    : Array.isArray(content)
      ? content
          .filter((b: any) => b?.type === "text")
          .map((b: any) => b.text)
          .join("")
      : "";

/** Anthropic's request in the chat shape: system first, tool results as `tool` messages; other fields kept. */
export function anthropicRequest(params: any): any {
  const messages: ChatMessage[] = [];
  if (params?.system !== undefined) messages.push({ role: "system", content: blockText(params.system) });
  for (const m of Array.isArray(params?.messages) ? params.messages : []) {
    if (typeof m?.content === "string") {
      messages.push({ role: m.role, content: m.content });
      continue;
    }
    const blocks: any[] = Array.isArray(m?.content) ? m.content : [];
    if (m?.role === "assistant") {
      const calls = blocks
        .filter((b) => b?.type === "tool_use")
        .map((b) => ({
          id: b.id,
          type: "function",
          function: { name: b.name, arguments: JSON.stringify(b.input ?? {}) },
        }));
      const text = blockText(blocks);
      messages.push({
        role: "assistant",
        content: text || (calls.length ? null : ""),
        ...(calls.length ? { tool_calls: calls } : {}),
      });
      continue;
    }
    for (const b of blocks)
      if (b?.type === "tool_result")
        messages.push({
          role: "tool",
          tool_call_id: b.tool_use_id,
          content: blockText(b.content) || String(b.content ?? ""),
        });
    const parts = blocks
      .filter((b) => b?.type !== "tool_result")
      .map((b) => (b?.type === "text" ? { type: "text", text: b.text } : b));
    if (parts.length) messages.push({ role: m?.role ?? "user", content: parts });
  }
  const { messages: _m, system: _s, ...rest } = params ?? {};
  const out: any = { ...rest, messages, api: "anthropic.messages" };
  if (Array.isArray(params?.tools))
    out.tools = params.tools.map((t: any) =>
      t?.input_schema
        ? { type: "function", function: { name: t.name, description: t.description, parameters: t.input_schema } }
        : t,
    );
  return out;
}

const FINISH: Record<string, string> = {
  end_turn: "stop",
  stop_sequence: "stop",
  tool_use: "tool_calls",
  max_tokens: "length",
  refusal: "content_filter",
};

/** Anthropic's Message as a chat completion. */
export function messageAsCompletion(m: any): ProviderResponse {
  const blocks: any[] = m.content ?? [];
  const calls = blocks
    .filter((b) => b?.type === "tool_use")
    .map((b) => ({ id: b.id, type: "function", function: { name: b.name, arguments: JSON.stringify(b.input ?? {}) } }));
  const text = blockText(blocks);
  const message: ChatMessage = { role: "assistant", content: text || null };
  if (calls.length) message.tool_calls = calls;
  const u = m.usage ?? {};
  const cacheRead = u.cache_read_input_tokens ?? 0;
  const cacheWrite = u.cache_creation_input_tokens ?? 0;
  const prompt = (u.input_tokens ?? 0) + cacheRead + cacheWrite;
  const completion = u.output_tokens ?? 0;
  // The 1-hour part of the writes, billed at its own rate (Cellar's name: docs/pricing.md, "Rates").
  const hour = Math.min(u.cache_creation?.ephemeral_1h_input_tokens ?? 0, cacheWrite);
  const details: Record<string, number> = { cached_tokens: cacheRead, cache_creation_tokens: cacheWrite };
  if (hour > 0) details.cache_creation_1h_tokens = hour;
  return {
    id: m.id,
    object: "chat.completion",
    model: m.model,
    // The tier that served the call (`standard`, `priority`, `batch`), which the price depends on.
    ...(typeof u.service_tier === "string" ? { service_tier: u.service_tier } : {}),
    choices: [{ index: 0, message, finish_reason: FINISH[m.stop_reason] ?? m.stop_reason ?? null }],
    usage: {
      prompt_tokens: prompt,
      completion_tokens: completion,
      total_tokens: prompt + completion,
      ...(cacheRead || cacheWrite ? { prompt_tokens_details: details } : {}),
    },
    source_object: "anthropic.message",
  };
}

/** A streamed Message put back together from its events. */
export function messageAccumulator() {
  let message: any = null;
  const partialJson = new Map<number, string>();
  return {
    add(event: any) {
      switch (event?.type) {
        case "message_start":
          message = {
            ...event.message,
            content: [...(event.message?.content ?? [])],
            usage: { ...event.message?.usage },
          };
          break;
        case "content_block_start":
          if (message) message.content[event.index] = { ...event.content_block };
          break;
        case "content_block_delta": {
          const block = message?.content[event.index];
          if (!block) break;
          if (event.delta?.type === "text_delta") block.text = (block.text ?? "") + event.delta.text;
          else if (event.delta?.type === "input_json_delta")
            partialJson.set(event.index, (partialJson.get(event.index) ?? "") + event.delta.partial_json);
          break;
        }
        case "content_block_stop": {
          const json = partialJson.get(event.index);
          if (message && json !== undefined) {
            try {
              message.content[event.index].input = JSON.parse(json || "{}");
            } catch {
              message.content[event.index].input = json;
            }
          }
          break;
        }
        case "message_delta":
          if (message) {
            for (const [k, v] of Object.entries(event.delta ?? {})) if (v !== null) message[k] = v;
            for (const [k, v] of Object.entries(event.usage ?? {})) if (v !== null) message.usage[k] = v;
          }
          break;
      }
    },
    result: () => message,
  };
}
