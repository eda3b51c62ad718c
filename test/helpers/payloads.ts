import type { IngestMessage } from "@cellar/shared/payloads";

/** Realistic OpenAI chat payloads for tests and benches. */
export function chatTrace(opts: {
  sessionId: string;
  serviceName?: string;
  messages: Array<Record<string, unknown>>;
  reply: string | Record<string, unknown>;
  start?: Date;
  durationMs?: number;
  model?: string;
  usage?: { prompt_tokens: number; completion_tokens: number; total_tokens?: number; [k: string]: unknown };
  finishReason?: string;
  extra?: Record<string, unknown>;
}) {
  const start = opts.start ?? new Date();
  const end = new Date(start.getTime() + (opts.durationMs ?? 800));
  const model = opts.model ?? "gpt-4o-mini";
  const usage = opts.usage ?? { prompt_tokens: 120, completion_tokens: 40 };
  const message = typeof opts.reply === "string" ? { role: "assistant", content: opts.reply } : opts.reply;
  return {
    provider: "openai",
    service_name: opts.serviceName ?? "support-bot",
    session_id: opts.sessionId,
    environment: "test",
    start_time: start.toISOString(),
    end_time: end.toISOString(),
    request: { model, messages: opts.messages },
    responses: [
      {
        id: `chatcmpl-${crypto.randomUUID().slice(0, 12)}`,
        object: "chat.completion",
        created: Math.floor(start.getTime() / 1000),
        model: `${model}-2024-07-18`,
        choices: [{ index: 0, message, finish_reason: opts.finishReason ?? "stop" }],
        usage: { total_tokens: usage.prompt_tokens + usage.completion_tokens, ...usage },
      },
    ],
    ...opts.extra,
  };
}

/** A one-turn session whose question and answer name it, so each session's transcript is its own. */
export const questionTrace = (sessionId: string, serviceName: string) =>
  chatTrace({
    sessionId,
    serviceName,
    messages: [{ role: "user", content: `question of ${sessionId}` }],
    reply: `answer <${sessionId}>`,
  });

/** An INGEST message of one chat trace, as ingest publishes it (the processor's tests that skip the door). */
export function ingestTrace(opts: {
  tenantId: string;
  messageId: string;
  sessionId: string;
  serviceName?: string;
  content?: string;
}): IngestMessage {
  return {
    kind: "trace",
    messageId: opts.messageId,
    tenantId: opts.tenantId,
    serviceName: opts.serviceName ?? "svc",
    receivedAt: new Date().toISOString(),
    payload: chatTrace({
      sessionId: opts.sessionId,
      messages: [{ role: "user", content: opts.content ?? "hi" }],
      reply: "a",
    }),
  } as unknown as IngestMessage;
}
