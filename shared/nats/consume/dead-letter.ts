import type { JsMsg } from "@nats-io/jetstream";
import type { StreamSpec } from "../catalogue.ts";
import { writeDeadLetter } from "../dead-letters.ts";
import type { ConsumeRuntime } from "./runtime.ts";
import type { DeadLetterInfo } from "./types.ts";

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
  for (let attempt = 0; ; attempt++) {
    try {
      await writeDeadLetter(rt.deps.js, rt.deps.topology, rt.spec as StreamSpec<unknown>, m, { error: reason, tenant });
      break;
    } catch (err) {
      if (rt.isStopping()) return void (rt.release(m), m.nak());
      rt.log.warn("could not store a dead letter; retrying", { seq: m.seq, err: err as Error });
      await rt.sleep(Math.min(rt.transient.max, rt.transient.first * 2 ** attempt));
    }
  }
  rt.release(m);
  m.ack();
  const info: DeadLetterInfo = {
    stream: rt.streamName,
    subject: m.subject,
    seq: m.seq,
    deliveries: m.info.deliveryCount,
    tenant,
    reason,
    data: m.data,
    headers: m.headers,
  };
  rt.log[rt.spec.consumer?.deadLetterLogLevel ?? "warn"]("message dead-lettered", {
    tenant: tenant ?? null,
    reason,
    seq: m.seq,
    subject: m.subject,
    deliveries: info.deliveries,
  });
  rt.deps.onDeadLetter?.(info);
}
