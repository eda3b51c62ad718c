import { createHash } from "node:crypto";

/**
 * The conversation a session's model saw last, as its messages' fingerprints (transcript.ts) and
 * their chain hash (docs/analyse-once.md): a trace fed whole sets the list, a trace fed from its
 * digest (digest.ts) only the chain, which is all a plain extension needs to be recognised in
 * O(1). The chain of a list is computed when first asked, and extended as messages are appended.
 */

/** A request whose history is known by chain hashes only (digest.ts). */
export interface ChainedRequest {
  /** Messages in the request. */
  n: number;
  /** Index of the first message kept whole (the tail); the ones before it are only chained. */
  from: number;
  /** chains[k]: chain hash of the fingerprints of messages 0..from+k-1 (k = 0..n-from). */
  chains: string[];
}

/** The chain hash of a conversation's fingerprints, one step (the empty conversation's is ""). */
export function chainStep(prev: string, fingerprint: string): string {
  return createHash("sha256").update(prev).update("\u0000").update(fingerprint).digest("hex").slice(0, 32);
}

/** Thrown when a trace fed from its digest needs what only its payload has: fold the session from payloads. */
export class NeedsPayload extends Error {
  constructor(why: string) {
    super(`session fold needs payloads: ${why}`);
    this.name = "NeedsPayload";
  }
}

export class Conversation {
  /** The fingerprints, or null when only the chain is known. */
  private list: string[] | null = [];
  private length = 0;
  /** The chain hash of the first `chained` fingerprints. */
  private hash = "";
  private chained = 0;

  get size(): number {
    return this.length;
  }
  /** The fingerprints (a trace fed whole aligns against them). */
  fingerprints(): string[] {
    if (!this.list) throw new NeedsPayload("a request to align against a conversation known by its chain only");
    return this.list;
  }
  /** The chain hash of the whole conversation. */
  chain(): string {
    if (this.chained < this.length) {
      const list = this.list!;
      for (let i = this.chained; i < this.length; i++) this.hash = chainStep(this.hash, list[i]);
      this.chained = this.length;
    }
    return this.hash;
  }
  setList(list: string[]): void {
    this.list = list;
    this.length = list.length;
    this.hash = "";
    this.chained = 0;
  }
  setChain(length: number, hash: string): void {
    this.list = null;
    this.length = length;
    this.hash = hash;
    this.chained = length;
  }
  push(fingerprint: string): void {
    if (this.list) this.list.push(fingerprint);
    else this.hash = chainStep(this.hash, fingerprint);
    this.length++;
    if (!this.list) this.chained = this.length;
  }
}
