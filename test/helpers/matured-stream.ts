import { maturationsOf, type MaturedMessage, type MaturedStreamMessage } from "@cellar/shared/payloads";
import type { TestStack } from "./stack";

/**
 * Every maturation the MATURED stream holds, in order: a batch counts as its items (the processor
 * publishes maturations in batches, apps/processor/src/maturation/mature.ts), so a maturation
 * published twice in two groupings appears twice.
 */
export async function maturationsInStream(stack: TestStack): Promise<Array<MaturedMessage & { subject: string }>> {
  const { jsm, topology } = stack.nats;
  const info = await jsm.streams.info(topology.maturedStream);
  const out: Array<MaturedMessage & { subject: string }> = [];
  for (let seq = info.state.first_seq; seq <= info.state.last_seq && info.state.messages > 0; seq++) {
    const m = await jsm.streams.getMessage(topology.maturedStream, { seq }).catch(() => null);
    if (m) for (const body of maturationsOf(m.json<MaturedStreamMessage>())) out.push({ ...body, subject: m.subject });
  }
  return out;
}
