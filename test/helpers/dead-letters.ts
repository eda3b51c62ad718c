import { consumersOf, ingestStream } from "@cellar/shared/nats/catalogue";
import { writeDeadLetter } from "@cellar/shared/nats/dead-letters";
import type { NatsHandles } from "@cellar/shared/nats/topology";

/** The reason the processor before issue 21's fix gave every non-OpenAI OTLP model call. */
export const PRE_FIX_REASON = "invalid message: invalid payload: has the wrong type";

/**
 * Does what the processor did before issue 21's fix with the next `expected` INGEST messages: pull
 * them from its durable consumers (every lane), store each in DEAD_LETTERS with `writeDeadLetter` under `reason`
 * and the tenant the body names (the runtime's guess for an undecodable message), then ack
 * (shared/nats/consume.ts, `deadLetter`). Run with no processor consuming. Returns the bodies.
 */
export async function deadLetterIngest(
  nats: Pick<NatsHandles, "js" | "topology">,
  expected: number,
  reason = PRE_FIX_REASON,
): Promise<Array<Record<string, any>>> {
  const { js, topology } = nats;
  const bodies: Array<Record<string, any>> = [];
  // Every consumer of INGEST in turn (its tenant lanes and the unlaned one) until all arrived.
  for (let round = 0; bodies.length < expected; round++) {
    if (round > 20) throw new Error(`only ${bodies.length} of ${expected} INGEST messages arrived`);
    for (const c of consumersOf(ingestStream, topology)) {
      const consumer = await js.consumers.get(topology.ingestStream, c.durable);
      const pending = (await consumer.info()).num_pending;
      if (pending === 0) continue;
      const batch = await consumer.fetch({ max_messages: pending, expires: 2_000 });
      for await (const m of batch) {
        const body = m.json<Record<string, any>>();
        await writeDeadLetter(js, topology, ingestStream, m, { error: reason, tenant: body.tenantId });
        m.ack();
        bodies.push(body);
      }
    }
    if (bodies.length < expected) await new Promise((r) => setTimeout(r, 250));
  }
  return bodies;
}
