import type { JsMsg } from "@nats-io/jetstream";
import { headers as newHeaders } from "@nats-io/transport-node";
import type { StreamSpec } from "../catalogue.ts";
import { type DeadLetterPart, writeDeadLetter } from "../dead-letters.ts";
import type { ConsumeRuntime } from "./runtime.ts";
import type { DeadLetterInfo, DeadPart } from "./types.ts";

/** The message's tenant: from the decoded value, else a best guess from an invalid body (for the log only). */
export function tenantOf<T>(spec: StreamSpec<T>, value: T | undefined, m: JsMsg): string | undefined {
  if (value !== undefined) return spec.codec.tenantOf?.(value);
  try {
    const t = (m.json() as { tenantId?: unknown })?.tenantId;
    return typeof t === "string" ? t.slice(0, 200) : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Stores the message in DEAD_LETTERS (retrying while NATS is away), then acks it, logs it once at
 * warn and tells `onDeadLetter`. Stopping while NATS is away gives the message back instead.
 */
export async function deadLetter<T>(
  rt: ConsumeRuntime<T>,
  m: JsMsg,
  value: T | undefined,
  reason: string,
): Promise<void> {
  const tenant = tenantOf(rt.spec, value, m);
  if (!(await store(rt, m, { error: reason, tenant }))) return;
  rt.release(m);
  m.ack();
  told(rt, m, { tenant, reason, subject: m.subject, data: m.data, headers: m.headers });
}

/**
 * Stores one part of the message in DEAD_LETTERS as a message of its own (retrying while NATS is
 * away), logs it and tells `onDeadLetter` with the part's body and headers; the caller acks the
 * message once every failed part is stored. False when stopping gave the message back instead.
 */
export async function deadLetterPart<T>(rt: ConsumeRuntime<T>, m: JsMsg, part: DeadPart): Promise<boolean> {
  const value = part.value as T;
  const tenant = rt.spec.codec.tenantOf?.(value);
  const headers = newHeaders();
  for (const k of m.headers?.keys() ?? [])
    if (k.toLowerCase() !== "nats-msg-id") for (const v of m.headers!.values(k)) headers.append(k, v);
  if (part.msgId) headers.set("Nats-Msg-Id", part.msgId);
  const stored: DeadLetterPart = {
    index: part.index,
    subject: rt.spec.subjectOf?.(rt.deps.topology, value) ?? m.subject,
    data: new TextEncoder().encode(JSON.stringify(value)),
    headers,
  };
  if (!(await store(rt, m, { error: part.reason, tenant }, stored))) return false;
  told(rt, m, { tenant, reason: part.reason, subject: stored.subject, data: stored.data, headers });
  return true;
}

/** Writes the dead letter, retrying while NATS is away; false (the message given back) when stopping. */
async function store<T>(
  rt: ConsumeRuntime<T>,
  m: JsMsg,
  info: { error: string; tenant?: string },
  part?: DeadLetterPart,
): Promise<boolean> {
  for (let attempt = 0; ; attempt++) {
    try {
      await writeDeadLetter(rt.deps.js, rt.deps.topology, rt.spec as StreamSpec<unknown>, m, info, part);
      return true;
    } catch (err) {
      if (rt.isStopping()) {
        rt.release(m);
        m.nak();
        return false;
      }
      rt.log.warn("could not store a dead letter; retrying", { seq: m.seq, err: err as Error });
      await rt.sleep(Math.min(rt.transient.max, rt.transient.first * 2 ** attempt));
    }
  }
}

/** Logs a stored dead letter once and tells `onDeadLetter`. */
function told<T>(
  rt: ConsumeRuntime<T>,
  m: JsMsg,
  what: Pick<DeadLetterInfo, "tenant" | "reason" | "subject" | "data" | "headers">,
): void {
  const info: DeadLetterInfo = { stream: rt.streamName, seq: m.seq, deliveries: m.info.deliveryCount, ...what };
  rt.log[rt.spec.consumer?.deadLetterLogLevel ?? "warn"]("message dead-lettered", {
    tenant: what.tenant ?? null,
    reason: what.reason,
    seq: m.seq,
    subject: what.subject,
    deliveries: info.deliveries,
  });
  rt.deps.onDeadLetter?.(info);
}
