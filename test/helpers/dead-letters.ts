import { consumersOf, ingestStream } from "@cellar/shared/nats/catalogue";
import { writeDeadLetter } from "@cellar/shared/nats/dead-letters";
import type { NatsHandles } from "@cellar/shared/nats/topology";

/** The reason the processor before issue 21's fix gave every non-OpenAI OTLP model call. */
export const PRE_FIX_REASON = "invalid message: invalid payload: has the wrong type";

/**
 * Does what the processor did before issue 21's fix with the next `expected` INGEST messages: pull
 * them from its durable consumer, store each in DEAD_LETTERS with `writeDeadLetter` under `reason`
 * and the tenant the body names (the runtime's guess for an undecodable message), then ack
 * (shared/nats/consume.ts, `deadLetter`). Run with no processor consuming. Returns the bodies.
 */
export async function deadLetterIngest(
  nats: Pick<NatsHandles, "js" | "topology">,
  expected: number,
  reason = PRE_FIX_REASON,
): Promise<Array<Record<string, any>>> {
  const { js, topology } = nats;
  const consumer = await js.consumers.get(topology.ingestStream, consumersOf(ingestStream, topology)[0].durable);
  const bodies: Array<Record<string, any>> = [];
  while (bodies.length < expected) {
    const batch = await consumer.fetch({ max_messages: expected - bodies.length, expires: 5_000 });
    for await (const m of batch) {
      const body = m.json<Record<string, any>>();
      await writeDeadLetter(js, topology, ingestStream, m, { error: reason, tenant: body.tenantId });
      m.ack();
      bodies.push(body);
    }
  }
  return bodies;
}
