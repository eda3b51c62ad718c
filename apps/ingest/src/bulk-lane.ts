import { jetstream } from "@nats-io/jetstream";
import type { NatsConnection } from "@nats-io/transport-node";
import type { Config } from "@cellar/shared/config";
import { connectNatsAs, type NatsClientSettings } from "@cellar/shared/deploy/nats";
import type { Logger } from "@cellar/shared/logger";
import { watchNatsStatus } from "@cellar/shared/ops/probes";
import type { BulkLaneRoute } from "./publish.ts";

/**
 * Ingest's second NATS connection, the bulk lane (docs/ingestion.md "The bulk lane"). An INGEST
 * message of INGEST_BULK_LANE_BYTES or more (a 500-span OTLP request is about 600 KB, a 1,000-item
 * batch about 1 MB) goes out on it, so the small messages of every other request are written on
 * the ordinary connection without queueing behind its bytes, and their PubAcks come back without
 * waiting for it. Still one INGEST message per request (issue 36): the lane only picks the socket.
 */
export interface BulkLane {
  nc: NatsConnection;
  /** What the publisher needs (publish.ts): the lane's JetStream client, its threshold, its state. */
  route: BulkLaneRoute;
  /** For /ready: throws while the lane's connection is closed, disconnected or not answering. */
  check: () => Promise<void>;
  /** Drains the lane (what was written is flushed, its PubAcks awaited) and closes it. */
  drain: () => Promise<void>;
}

/** The name the lane's connection gives the server (its connz shows it beside `cellar-ingest`). */
export const BULK_LANE_CONNECTION_NAME = "cellar-ingest-bulk";

/** Opens the bulk lane as the ingest app's NATS user (same credentials and TLS as its first connection). */
export async function openBulkLane(
  config: Pick<Config, "INGEST_BULK_LANE_BYTES"> & NatsClientSettings,
  logger: Logger,
): Promise<BulkLane> {
  const nc = await connectNatsAs(config, BULK_LANE_CONNECTION_NAME, { waitOnFirstConnect: true, noAsyncTraces: true });
  return bulkLaneOn(nc, config.INGEST_BULK_LANE_BYTES, logger);
}

/** The bulk lane over a connection already open (openBulkLane, or a test's own). */
export function bulkLaneOn(nc: NatsConnection, minBytes: number, logger: Logger): BulkLane {
  const down = watchNatsStatus(nc, {
    warn: (msg, fields) => logger.warn(`bulk lane: ${msg}`, fields),
  });
  const connected = () => !nc.isClosed() && down() === undefined;
  return {
    nc,
    route: { js: jetstream(nc, { checkAPI: false }), minBytes, connected },
    check: async () => {
      if (nc.isClosed()) throw new Error("bulk lane connection closed");
      const why = down();
      if (why) throw new Error(`bulk lane: ${why}`);
      // A round trip: a connection that is up but stuck is not ready either.
      await nc.flush();
    },
    drain: () => (nc.isClosed() ? Promise.resolve() : nc.drain()),
  };
}
