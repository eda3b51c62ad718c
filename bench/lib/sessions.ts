import type { JetStreamClient } from "@nats-io/jetstream";
import { ingestStream } from "@cellar/shared/nats/catalogue";
import { publish } from "@cellar/shared/nats/publish";
import type { Topology } from "@cellar/shared/nats/topology";
import type { IngestMessage } from "@cellar/shared/payloads";
import type postgres from "postgres";
import { writeIngestBatch } from "../../apps/processor/src/ingest/writer";

/**
 * Publishes `n` one-trace sessions (`<prefix>-<i>`) of a tenant's service straight to INGEST, as
 * ingest would, from the templates (bench/lib/traces.ts): the benches that measure the processor
 * and the dispatcher without the ingest app.
 */
export function createSessionPublisher(js: JetStreamClient, topology: Topology, tenantId: string, templates: string[]) {
  let seq = 0;
  return (service: string, prefix: string, n: number) =>
    Promise.all(
      Array.from({ length: n }, (_, i) => {
        const message = {
          kind: "trace",
          messageId: `${prefix}-${i}-${seq++}`,
          tenantId,
          serviceName: service,
          receivedAt: new Date().toISOString(),
          payload: JSON.parse(templates[i % templates.length].replace("__SESSION__", `${prefix}-${i}`)),
        } as IngestMessage;
        return publish(js, topology, ingestStream, message, { msgID: message.messageId });
      }),
    );
}

/** `xs` in consecutive slices of at most `n`. */
export const chunks = <T>(xs: T[], n: number): T[][] =>
  Array.from({ length: Math.ceil(xs.length / n) }, (_, i) => xs.slice(i * n, i * n + n));

/**
 * Writes `sessions` sessions of `traces` traces each for a tenant's service as the INGEST consumer
 * does (500 items a transaction), then waits out a 1 s maturation window so every session is due:
 * the maturation benches' setup. `payload(s, t)` is trace t of session s; `interleaved` sends the
 * sessions' traces in time order across sessions (as the e2e bench does), else session by session.
 */
export async function writeDueSessions(
  sql: postgres.Sql,
  o: {
    tenantId: string;
    service: string;
    round: number;
    sessions: number;
    traces: number;
    interleaved: boolean;
    payload: (s: number, t: number) => unknown;
  },
): Promise<void> {
  const messages: IngestMessage[] = [];
  const add = (s: number, t: number) =>
    messages.push({
      kind: "trace",
      messageId: `r${o.round}-${s}-${t}`,
      tenantId: o.tenantId,
      serviceName: o.service,
      receivedAt: new Date().toISOString(),
      payload: o.payload(s, t),
    } as unknown as IngestMessage);
  if (o.interleaved) for (let t = 0; t < o.traces; t++) for (let s = 0; s < o.sessions; s++) add(s, t);
  else for (let s = 0; s < o.sessions; s++) for (let t = 0; t < o.traces; t++) add(s, t);
  for (const part of chunks(messages, 500)) await writeIngestBatch(sql, part);
  await Bun.sleep(1_200); // the window (1 s) passes: every session is due
}
