import type { JetStreamClient, PubAck } from "@nats-io/jetstream";
import type { MsgHdrs } from "@nats-io/transport-node";
import type { StreamSpec } from "./catalogue.ts";
import type { Topology } from "./topology.ts";

export interface PublishOptions {
  /** Nats-Msg-Id: the stream stores one copy within its duplicate window. */
  msgID?: string;
  /** How long to wait for the PubAck (ms). */
  timeout?: number;
  headers?: MsgHdrs;
  /**
   * The value's JSON when the caller already has it (must equal JSON.stringify(value)), as text
   * or as its UTF-8 bytes (the client would encode the text itself).
   */
  text?: string | Uint8Array;
}

/**
 * The one way to put a message on a catalogue stream: the value's type is the stream's message
 * schema, the subject comes from the catalogue, and it resolves once JetStream stored it.
 */
export function publish<T>(
  js: JetStreamClient,
  t: Topology,
  spec: StreamSpec<T>,
  value: T,
  opts: PublishOptions = {},
): Promise<PubAck> {
  if (!spec.subjectOf) throw new Error(`stream ${spec.key} is not published through the catalogue`);
  const { text, ...publishOpts } = opts;
  return js.publish(spec.subjectOf(t, value), text ?? JSON.stringify(value), { timeout: 10_000, ...publishOpts });
}
