import { deflateRawSync, inflateRawSync } from "node:zlib";
import { inJsonbOrder } from "@cellar/shared/db/payload-codec";
import { chainStep } from "./chain.ts";
import { messageFingerprint, type TraceInput } from "./transcript.ts";

/**
 * A trace's session digest (docs/analyse-once.md): what the session's analysis needs of a long
 * request, taken at write while the payload is in memory. The request's messages up to its last
 * assistant message are the history an app re-sends; a plain extension of the conversation finds
 * nothing fresh there, so the digest keeps of them only the chain hash of their fingerprints at
 * each position from there on (`chains`), and the messages after it whole (`tail`). Everything
 * else of the payload is kept as stored. A maturation folds the digest in O(tail), whatever the
 * conversation's length; when the alignment would need more (an edited or truncated history),
 * the builder throws NeedsPayload and the session is folded from its payloads, as before.
 */

/** Payloads below this many bytes of JSON get no digest: reading them whole is as cheap. */
export const DIGEST_MIN_JSON_BYTES = 16 * 1024;

const messagesOf = (payload: Record<string, any>): any[] | null =>
  Array.isArray(payload?.request?.messages) ? payload.request.messages : null;

/**
 * The digest of a payload, deflated, or null when it would not pay: a small payload, a call whose
 * messages come as log records (rebuilt at maturation), or a request without history to prune.
 */
export function encodeDigest(
  payload: Record<string, any>,
  jsonBytes: number,
  minJsonBytes = DIGEST_MIN_JSON_BYTES,
): Buffer | null {
  if (jsonBytes < minJsonBytes) return null;
  if (payload?.otel?.messages === "none") return null;
  const messages = messagesOf(payload);
  if (!messages) return null;
  let from = 0;
  for (let j = messages.length - 1; j >= 0; j--)
    if (messages[j]?.role === "assistant") {
      from = j + 1;
      break;
    }
  if (from === 0) return null;
  let h = "";
  const chains: string[] = [];
  for (let j = 0; j < messages.length; j++) {
    if (j >= from) chains.push(h);
    h = chainStep(h, messageFingerprint(messages[j]));
  }
  chains.push(h);
  const ordered = inJsonbOrder(payload) as Record<string, any>;
  const digest = {
    v: 1,
    n: messages.length,
    from,
    chains,
    payload: { ...ordered, request: { ...ordered.request, messages: ordered.request.messages.slice(from) } },
  };
  return deflateRawSync(Buffer.from(JSON.stringify(digest), "utf8"), { level: 6 });
}

/**
 * A stored digest back as the analysis reads a trace: the payload with the tail at its indexes
 * (the pruned messages are holes: an item never reads them, NeedsPayload comes first).
 */
export function decodeDigest(stored: Uint8Array, trace: Omit<TraceInput, "payload" | "chained">): TraceInput {
  const d = JSON.parse(inflateRawSync(stored).toString("utf8")) as {
    n: number;
    from: number;
    chains: string[];
    payload: Record<string, any>;
  };
  const messages = new Array(d.n);
  const tail: unknown[] = d.payload.request.messages;
  for (let k = 0; k < tail.length; k++) messages[d.from + k] = tail[k];
  return {
    ...trace,
    payload: { ...d.payload, request: { ...d.payload.request, messages } },
    chained: { n: d.n, from: d.from, chains: d.chains },
  };
}
