import type { JetStreamClient } from "@nats-io/jetstream";
import { ingestStream } from "@cellar/shared/nats/catalogue";
import { publish } from "@cellar/shared/nats/publish";
import type { Topology } from "@cellar/shared/nats/topology";
import type { IngestMessage } from "@cellar/shared/payloads";

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
