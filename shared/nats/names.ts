import { laneOf, laneToken } from "./lanes.ts";

/**
 * Names of every stream, subject and bucket. Production uses the contract's names (`INGEST`,
 * `MATURED`, `DELIVERIES`, `activity`); tests pass a namespace so each file gets its own. What
 * each stream holds and how it is consumed is declared once, in the catalogue (catalogue.ts).
 */
export interface Topology {
  ingestStream: string;
  maturedStream: string;
  deliveriesStream: string;
  deadLetterStream: string;
  activityBucket: string;
  /** Subjects: `<prefix>ingest.trace`, `<prefix>ingest.event`, `<prefix>matured.session`, ... */
  subjectPrefix: string;
}

export function createTopology(namespace = ""): Topology {
  const n = namespace ? `${namespace}_` : "";
  return {
    ingestStream: `${n}INGEST`,
    maturedStream: `${n}MATURED`,
    deliveriesStream: `${n}DELIVERIES`,
    deadLetterStream: `${n}DEAD_LETTERS`,
    activityBucket: `${n}activity`,
    subjectPrefix: namespace ? `${namespace}.` : "",
  };
}

export const subjects = {
  ingestTrace: (t: Topology) => `${t.subjectPrefix}ingest.trace`,
  ingestEvent: (t: Topology) => `${t.subjectPrefix}ingest.event`,
  /** The tenant's lane subject (catalogue.ts, lanes.ts). */
  matured: (t: Topology, kind: "session" | "trace", tenantId: string) =>
    `${t.subjectPrefix}matured.${kind}.${laneToken(laneOf(tenantId))}`,
};
