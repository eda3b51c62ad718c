import { useState } from "preact/hooks";
import { Link } from "wouter-preact";
import { api, enc } from "../api";
import { ms, num, prettyJson, text, when } from "../format";

export interface Item {
  id: string;
  type: "system" | "user" | "assistant" | "tool_call" | "tool_result" | "event";
  role: string | null;
  timestamp: string;
  traceId?: string;
  spanId?: string;
  content: unknown;
  contentLength?: number;
  contentTruncated?: boolean;
  toolName?: string | null;
  toolCallId?: string | null;
  model?: string;
  /** The response's usage as the provider sent it (OpenAI: snake_case). */
  usage?: Record<string, unknown> | null;
  latencyMs?: number;
  finishReason?: string;
  edited?: boolean;
  name?: string;
  severityNumber?: number;
  reasoning?: string | null;
}

/** A lean tool item's full content, read on demand from the item endpoint. */
function FullContent({
  service,
  sessionId,
  item,
  render,
}: {
  service: string;
  sessionId: string;
  item: Item;
  render: (c: unknown) => string;
}) {
  const [full, setFull] = useState<unknown>(undefined);
  const [error, setError] = useState<string | null>(null);
  const shown = full === undefined ? item.content : full;
  const load = async () => {
    try {
      const r = await api(
        `/telemetry/otel/sessions/${enc(service)}/${enc(sessionId)}/transcript/items/${enc(item.id)}`,
      );
      setFull(r.item.content);
    } catch (err) {
      setError(String((err as Error).message));
    }
  };
  return (
    <>
      <pre class="code">{render(shown)}</pre>
      {item.contentTruncated && full === undefined && (
        <button type="button" class="small" onClick={load}>
          Show full content ({num(item.contentLength)} characters)
        </button>
      )}
      {error && (
        <p class="error" role="alert">
          {error}
        </p>
      )}
    </>
  );
}

function tokensOf(usage: Item["usage"]): number | undefined {
  const v = usage?.total_tokens ?? usage?.totalTokens;
  return typeof v === "number" ? v : undefined;
}

const ROLE_LABEL: Record<string, string> = { system: "System", user: "User", assistant: "Assistant" };

export function TranscriptItem({ item, service, sessionId }: { item: Item; service: string; sessionId: string }) {
  const time = <time dateTime={item.timestamp}>{when(item.timestamp)}</time>;
  const traceLink = item.traceId && (
    <Link
      href={`/traces/${enc(service)}/${enc(item.traceId)}${item.spanId ? `#span-${item.spanId}` : ""}`}
      class="small-link"
    >
      trace
    </Link>
  );
  if (item.type === "tool_call" || item.type === "tool_result") {
    const call = item.type === "tool_call";
    const size = item.contentLength ?? text(item.content).length;
    return (
      <li class={`item tool ${item.type}`} id={`item-${item.id}`}>
        <details>
          <summary>
            <span class="tool-kind">{call ? "Tool call" : "Tool result"}</span>{" "}
            <strong>{item.toolName ?? "unknown tool"}</strong>
            <span class="muted">
              {" "}
              · {num(size)} characters · {time}
            </span>
          </summary>
          <FullContent service={service} sessionId={sessionId} item={item} render={call ? prettyJson : text} />
          <p class="muted small">
            {item.toolCallId && <>call id {item.toolCallId} · </>}
            {traceLink}
          </p>
        </details>
      </li>
    );
  }
  if (item.type === "event") {
    const c = (item.content ?? {}) as { name?: string; attributes?: unknown; body?: unknown };
    const severe = (item.severityNumber ?? 0) >= 17;
    return (
      <li class={`item event${severe ? " severe" : ""}`} id={`item-${item.id}`}>
        <details>
          <summary>
            <span class="tool-kind">Event</span> <strong>{item.name ?? c.name}</strong>{" "}
            <span class="muted">· {time}</span>
          </summary>
          <pre class="code">{JSON.stringify({ attributes: c.attributes, body: c.body }, null, 2)}</pre>
        </details>
      </li>
    );
  }
  return (
    <li class={`item msg msg-${item.type}`} id={`item-${item.id}`}>
      <div class="msg-head">
        <strong>{ROLE_LABEL[item.type] ?? item.type}</strong>
        {item.edited && <span class="badge badge-partial">edited</span>}
        <span class="muted small">
          {time}
          {item.model && <> · {item.model}</>}
          {tokensOf(item.usage) !== undefined && <> · {num(tokensOf(item.usage))} tokens</>}
          {item.latencyMs !== undefined && <> · {ms(item.latencyMs)}</>} {traceLink}
        </span>
      </div>
      <div class="content">{text(item.content) || <span class="muted">(no text)</span>}</div>
    </li>
  );
}

export function Transcript({ items, service, sessionId }: { items: Item[]; service: string; sessionId: string }) {
  return (
    <ol class="transcript" aria-label="Transcript">
      {items.map((item) => (
        <TranscriptItem key={item.id} item={item} service={service} sessionId={sessionId} />
      ))}
    </ol>
  );
}
