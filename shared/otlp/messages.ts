import type { Attributes } from "./decode.ts";

/**
 * Every way GenAI instrumentations record messages, turned into the one chat shape Cellar's
 * analysis reads (OpenAI chat completions: {role, content, tool_calls, tool_call_id}). Provider
 * message shapes (Anthropic content blocks, Gemini parts, Bedrock Converse blocks) reach us
 * through the conventions' parts, or raw inside a JSON attribute; both are handled here so the
 * transcript code never sees them.
 */

export interface ChatMessage {
  role: string;
  content: string | any[] | null;
  tool_calls?: Array<{ id: string; type: "function"; function: { name: string; arguments: string } }>;
  tool_call_id?: string;
  name?: string;
  reasoning_content?: string;
}

export interface OutputChoice {
  message: ChatMessage;
  finishReason: string | null;
}

const str = (v: unknown): string | null => (typeof v === "string" ? v : null);
const asJsonText = (v: unknown): string =>
  typeof v === "string" ? v : v === undefined || v === null ? "" : JSON.stringify(v);

/** A JSON string attribute, or the structured value itself (AnyValue arrays arrive decoded). */
export function jsonValue(v: unknown): unknown {
  if (typeof v !== "string") return v;
  const t = v.trim();
  if (!t.startsWith("[") && !t.startsWith("{")) return v;
  try {
    return JSON.parse(t);
  } catch {
    return v;
  }
}

function roleOf(raw: unknown): string {
  const r = (str(raw) ?? "user").toLowerCase();
  if (r === "model") return "assistant"; // Gemini
  if (r === "human") return "user";
  if (r === "ai") return "assistant";
  return r;
}

function toolCall(id: unknown, name: unknown, args: unknown) {
  return {
    id: str(id) ?? "",
    type: "function" as const,
    function: { name: str(name) ?? "unknown", arguments: asJsonText(args) },
  };
}

/**
 * One message in any of the shapes below -> one or more chat messages (a message holding several
 * tool results becomes one `tool` message per result, as OpenAI sends them):
 * - conventions: {role, parts: [{type: text|tool_call|tool_call_response|reasoning|...}]}
 * - OpenAI: {role, content, tool_calls, tool_call_id}
 * - Anthropic: {role, content: [{type: text|tool_use|tool_result|thinking}]}
 * - Gemini: {role: user|model, parts: [{text}|{functionCall}|{functionResponse}]}
 * - Bedrock Converse: {role, content: [{text}|{toolUse}|{toolResult}]}
 */
export function normaliseMessage(m: any): ChatMessage[] {
  if (!m || typeof m !== "object") return typeof m === "string" ? [{ role: "user", content: m }] : [];
  const role = roleOf(m.role);
  const blocks: any[] | null = Array.isArray(m.parts)
    ? m.parts
    : Array.isArray(m.content) && m.content.some(isProviderBlock)
      ? m.content
      : null;
  if (!blocks) {
    // Only assistant messages may lack content (tool calls); the others get "" (docs/ingestion.md rule).
    const missing = role === "assistant" ? null : "";
    const out: ChatMessage = {
      role,
      content:
        m.content === undefined || m.content === null
          ? missing
          : typeof m.content === "string" || Array.isArray(m.content)
            ? m.content
            : asJsonText(m.content),
    };
    if (Array.isArray(m.tool_calls) && m.tool_calls.length) {
      out.tool_calls = m.tool_calls.map((c: any) =>
        toolCall(c?.id, c?.function?.name ?? c?.name, c?.function?.arguments ?? c?.arguments),
      );
    }
    if (str(m.tool_call_id) ?? str(m.id)) if (role === "tool") out.tool_call_id = str(m.tool_call_id) ?? str(m.id)!;
    if (str(m.name)) out.name = m.name;
    return [out];
  }
  const texts: string[] = [];
  const others: any[] = [];
  const calls: NonNullable<ChatMessage["tool_calls"]> = [];
  const results: ChatMessage[] = [];
  const reasoning: string[] = [];
  for (const b of blocks) {
    if (typeof b === "string") {
      texts.push(b);
      continue;
    }
    if (!b || typeof b !== "object") continue;
    const t = str(b.type);
    if (t === "text" || (t === null && typeof b.text === "string")) texts.push(str(b.content) ?? str(b.text) ?? "");
    else if (t === "tool_call") calls.push(toolCall(b.id, b.name, b.arguments));
    else if (t === "tool_use")
      calls.push(toolCall(b.id, b.name, b.input)); // Anthropic
    else if (b.functionCall)
      calls.push(toolCall(b.functionCall.id ?? b.functionCall.name, b.functionCall.name, b.functionCall.args)); // Gemini
    else if (b.toolUse)
      calls.push(toolCall(b.toolUse.toolUseId, b.toolUse.name, b.toolUse.input)); // Bedrock
    else if (t === "tool_call_response")
      results.push({ role: "tool", tool_call_id: str(b.id) ?? "", content: asJsonText(b.response ?? b.result) });
    else if (t === "tool_result")
      results.push({ role: "tool", tool_call_id: str(b.tool_use_id) ?? "", content: blockText(b.content) }); // Anthropic
    else if (b.functionResponse)
      results.push({
        role: "tool",
        tool_call_id: str(b.functionResponse.id) ?? str(b.functionResponse.name) ?? "",
        name: str(b.functionResponse.name) ?? undefined,
        content: asJsonText(b.functionResponse.response),
      });
    else if (b.toolResult)
      results.push({
        role: "tool",
        tool_call_id: str(b.toolResult.toolUseId) ?? "",
        content: blockText(b.toolResult.content),
      }); // Bedrock
    else if (t === "reasoning" || t === "thinking") reasoning.push(str(b.content) ?? str(b.thinking) ?? "");
    else others.push(b);
  }
  const out: ChatMessage[] = [];
  if (texts.length || calls.length || others.length || reasoning.length || results.length === 0) {
    const msg: ChatMessage = {
      role: role === "tool" && results.length ? "assistant" : role,
      content: others.length
        ? [...texts.map((t) => ({ type: "text", text: t })), ...others]
        : texts.length
          ? texts.join("")
          : calls.length
            ? null
            : "",
    };
    if (calls.length) msg.tool_calls = calls;
    if (reasoning.length) msg.reasoning_content = reasoning.join("\n");
    if (str(m.name)) msg.name = m.name;
    if (!(results.length && !texts.length && !calls.length && !others.length)) out.push(msg);
  }
  out.push(...results);
  return out;
}

function isProviderBlock(b: any): boolean {
  return (
    !!b &&
    typeof b === "object" &&
    (typeof b.type === "string"
      ? ["tool_use", "tool_result", "thinking", "tool_call", "tool_call_response"].includes(b.type)
      : !!(b.text !== undefined || b.functionCall || b.functionResponse || b.toolUse || b.toolResult))
  );
}

function blockText(content: unknown): string {
  if (typeof content === "string") return content;
  if (Array.isArray(content))
    return content
      .map((c) => (typeof c === "string" ? c : (str(c?.text) ?? (c?.json !== undefined ? JSON.stringify(c.json) : ""))))
      .join("");
  return asJsonText(content);
}

/** gen_ai.input.messages / gen_ai.prompt JSON (array of messages in any shape above). */
export function messagesFromValue(v: unknown): ChatMessage[] {
  const parsed = jsonValue(v);
  if (!Array.isArray(parsed)) return typeof parsed === "string" && parsed ? [{ role: "user", content: parsed }] : [];
  return parsed.flatMap(normaliseMessage);
}

/** gen_ai.output.messages: [{role, parts, finish_reason}] (or OpenAI choices). */
export function choicesFromValue(v: unknown): OutputChoice[] {
  const parsed = jsonValue(v);
  const list = Array.isArray(parsed)
    ? parsed
    : parsed && typeof parsed === "object"
      ? [parsed]
      : typeof parsed === "string" && parsed
        ? [{ role: "assistant", content: parsed }]
        : [];
  const out: OutputChoice[] = [];
  for (const item of list) {
    const src = item?.message && typeof item.message === "object" ? { role: "assistant", ...item.message } : item;
    const [message] = normaliseMessage({ ...src, role: "assistant" });
    if (message)
      out.push({
        message: { ...message, role: "assistant" },
        finishReason: str(item?.finish_reason) ?? str(item?.finishReason) ?? null,
      });
  }
  return out;
}

/** System instructions: [{type: "text", content}] or a plain string -> one system message. */
export function systemFromValue(v: unknown): ChatMessage | null {
  const parsed = jsonValue(v);
  if (typeof parsed === "string") return parsed ? { role: "system", content: parsed } : null;
  if (!Array.isArray(parsed)) return null;
  const text = parsed.map((p) => (typeof p === "string" ? p : (str(p?.content) ?? str(p?.text) ?? ""))).join("");
  return text ? { role: "system", content: text } : null;
}

/** Indexed attributes `prefix.N.rest` grouped by N, in order (OpenLLMetry, OpenInference). */
export function indexed(attrs: Attributes, prefix: string): Array<Record<string, unknown>> {
  const groups = new Map<number, Record<string, unknown>>();
  const p = `${prefix}.`;
  for (const key in attrs) {
    if (!key.startsWith(p)) continue;
    const rest = key.slice(p.length);
    const dot = rest.indexOf(".");
    if (dot <= 0) continue;
    const n = Number(rest.slice(0, dot));
    if (!Number.isInteger(n) || n < 0 || n > 100_000) continue;
    let g = groups.get(n);
    if (!g) groups.set(n, (g = {}));
    g[rest.slice(dot + 1)] = attrs[key];
  }
  return [...groups.entries()].sort((a, b) => a[0] - b[0]).map(([, g]) => g);
}

/** OpenLLMetry `gen_ai.prompt.N.*` / `gen_ai.completion.N.*` -> messages. */
export function fromOpenLlmetry(group: Record<string, unknown>, defaultRole: string): ChatMessage {
  const calls = indexed(group, "tool_calls").map((c) => toolCall(c.id, c.name, c.arguments));
  const msg: ChatMessage = {
    role: roleOf(group.role ?? defaultRole),
    content:
      group.content === undefined
        ? calls.length
          ? null
          : ""
        : typeof group.content === "string"
          ? contentMaybeParts(group.content)
          : asJsonText(group.content),
  };
  if (calls.length) msg.tool_calls = calls;
  if (str(group.tool_call_id)) msg.tool_call_id = group.tool_call_id as string;
  return msg;
}

/** OpenLLMetry sometimes writes content parts as a JSON array text: keep plain text plain. */
function contentMaybeParts(text: string): string | any[] {
  const v = jsonValue(text);
  if (Array.isArray(v) && v.every((p) => p && typeof p === "object" && typeof p.type === "string")) {
    return v.every((p) => p.type === "text") ? v.map((p) => String(p.text ?? "")).join("") : v;
  }
  return text;
}

/** OpenInference `llm.input_messages.N.message.*` -> messages. */
export function fromOpenInference(group: Record<string, unknown>, defaultRole: string): ChatMessage {
  const calls = indexed(group, "message.tool_calls").map((c) =>
    toolCall(c["tool_call.id"], c["tool_call.function.name"], c["tool_call.function.arguments"]),
  );
  let content: string | null = str(group["message.content"]);
  if (content === null) {
    const parts = indexed(group, "message.contents").map((c) => str(c["message_content.text"]) ?? "");
    content = parts.length ? parts.join("") : calls.length ? null : "";
  }
  const msg: ChatMessage = { role: roleOf(group["message.role"] ?? defaultRole), content };
  if (calls.length) msg.tool_calls = calls;
  if (str(group["message.tool_call_id"])) msg.tool_call_id = group["message.tool_call_id"] as string;
  if (str(group["message.name"])) msg.name = group["message.name"] as string;
  return msg;
}

/**
 * The deprecated per-message events (gen_ai.system.message, gen_ai.user.message,
 * gen_ai.assistant.message, gen_ai.tool.message, gen_ai.choice): body (or attributes, for span
 * events) -> a request message or an output choice.
 */
export const PER_MESSAGE_EVENTS: Record<string, string> = {
  "gen_ai.system.message": "system",
  "gen_ai.user.message": "user",
  "gen_ai.assistant.message": "assistant",
  "gen_ai.tool.message": "tool",
};
export const CHOICE_EVENT = "gen_ai.choice";

export function messageFromEvent(name: string, body: any): ChatMessage | null {
  const role = PER_MESSAGE_EVENTS[name];
  if (!role) return null;
  const b = body && typeof body === "object" ? body : { content: body };
  const [m] = normaliseMessage({
    ...b,
    role: b.role ?? role,
    tool_call_id: b.tool_call_id ?? (role === "tool" ? b.id : undefined),
  });
  if (m && role === "tool" && !m.tool_call_id && str(b.id)) m.tool_call_id = b.id;
  return m ?? null;
}

export function choiceFromEvent(body: any): OutputChoice & { index: number } {
  const b = body && typeof body === "object" ? body : {};
  const [message] = normaliseMessage({
    role: "assistant",
    ...(b.message && typeof b.message === "object" ? b.message : {}),
  });
  return {
    index: Number.isInteger(b.index) ? b.index : 0,
    message: { ...(message ?? { content: null }), role: "assistant" },
    finishReason: str(b.finish_reason),
  };
}
