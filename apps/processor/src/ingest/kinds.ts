import { INGEST_KIND_RULES } from "@cellar/shared/ingest-rules";
import { PermanentMessageError } from "@cellar/shared/nats/failure";
import { insertEvents } from "./events.ts";
import type { IngestKind, MessageKind } from "./kind-types.ts";
import { writeScores } from "./scores.ts";
import { insertTraces } from "./traces.ts";

/**
 * The message kinds INGEST carries, as a registry: for each kind, the rules its messages are
 * decoded with, the writer that stores them, and what storing one does to maturation. The INGEST
 * codec (shared/nats/catalogue.ts) checks a message by its kind's rules; the writer
 * (writer.ts) takes each message to its kind's stage; a kind missing here does not compile, and
 * kinds.test.ts checks the registry against the kinds of the `IngestMessage` schema. A message of
 * a kind not in the registry is refused (PermanentMessageError: dead-lettered), never written as
 * some other kind. The types are in kind-types.ts.
 */
export const MESSAGE_KINDS: { [K in IngestKind]: MessageKind<K> } = {
  trace: {
    kind: "trace",
    rules: INGEST_KIND_RULES.trace,
    writer: { stage: "session", seedAt: (m) => m.payload.start_time, insert: insertTraces },
    maturation: "opens-trace",
  },
  event: {
    kind: "event",
    rules: INGEST_KIND_RULES.event,
    writer: { stage: "session", seedAt: (m) => m.payload.timestamp, insert: insertEvents },
    maturation: "session-activity",
  },
  score: {
    kind: "score",
    rules: INGEST_KIND_RULES.score,
    writer: { stage: "alone", write: writeScores },
    maturation: "none",
  },
};

/** The registry's entry of a message's kind; any other kind is refused for good (dead-lettered). */
export function kindOf(message: { kind: unknown }): MessageKind<IngestKind> {
  const kind = message.kind;
  if (typeof kind === "string" && Object.hasOwn(MESSAGE_KINDS, kind))
    return MESSAGE_KINDS[kind as IngestKind] as MessageKind<IngestKind>;
  throw new PermanentMessageError(`invalid kind: no writer for ${JSON.stringify(kind)}`);
}
