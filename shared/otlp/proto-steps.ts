import { Buffer } from "node:buffer";
import protobuf from "protobufjs";
import type { Steps } from "../steps.ts";

/**
 * A protobuf message decoded in steps (shared/steps.ts), one per item at the end of `path`, a
 * chain of repeated message fields (OTLP: resourceSpans, scopeSpans, spans). Each item is decoded
 * on its own by its type's decoder, and each level's other fields by that level's decoder from
 * their bytes put together in order: the wire format's fields are independent, so the message is
 * the one-piece `t.decode(bytes)`'s. Null when the walk cannot vouch for that (a group, a field
 * number 0, an item field of another wire type, a length past the end): the caller decodes in
 * one piece. A decoder's error is thrown as is (the caller decodes in one piece for its message).
 */
export function* decodeDownPath(t: protobuf.Type, bytes: Uint8Array, path: string[]): Steps<any> {
  return yield* decodeLevel(t, bytes, path, 0);
}

function* decodeLevel(t: protobuf.Type, bytes: Uint8Array, path: string[], depth: number): Steps<any> {
  if (path.length === 0) {
    const item = decodeAtDepth(t, bytes, depth);
    yield;
    return item;
  }
  const field = t.fields[path[0]];
  const reader = protobuf.Reader.create(bytes);
  const rest: Uint8Array[] = [];
  const children: unknown[] = [];
  while (reader.pos < reader.len) {
    const start = reader.pos;
    const tag = reader.uint32();
    const wire = tag & 7;
    if (tag >>> 3 === 0 || wire === 3 || wire === 4 || wire > 5) return null;
    if (tag >>> 3 !== field.id) {
      reader.skipType(wire);
      rest.push(bytes.subarray(start, reader.pos));
      continue;
    }
    if (wire !== 2) return null;
    const length = reader.uint32();
    const from = reader.pos;
    if (from + length > reader.len) return null;
    reader.skip(length);
    const child = yield* decodeLevel(
      field.resolvedType as protobuf.Type,
      bytes.subarray(from, from + length),
      path.slice(1),
      depth + 1,
    );
    if (child === null) return null;
    children.push(child);
  }
  // Same kind of buffer as the request's: protobufjs reads a Buffer's strings through Buffer, as in one piece.
  const others = rest.length === 1 ? rest[0] : Buffer.isBuffer(bytes) ? Buffer.concat(rest) : concatBytes(rest);
  const message = decodeAtDepth(t, others, depth);
  if (children.length) message[field.name] = children;
  return message;
}

/**
 * `t.decode(bytes)` as if nested `depth` levels down, where the one-piece decode meets it: its
 * generated decoders check their depth against Reader.recursionLimit on every call.
 */
function decodeAtDepth(t: protobuf.Type, bytes: Uint8Array, depth: number): any {
  if (depth === 0) return t.decode(bytes);
  const limit = protobuf.Reader.recursionLimit;
  protobuf.Reader.recursionLimit = limit - depth;
  try {
    return t.decode(bytes);
  } finally {
    protobuf.Reader.recursionLimit = limit;
  }
}

function concatBytes(parts: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}
