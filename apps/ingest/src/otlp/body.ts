import { HttpError } from "@cellar/shared/errors";

const tooLarge = (maxBytes: number) => new HttpError(413, `body exceeds the limit of ${maxBytes} bytes`);

/**
 * The request body as bytes, gunzipped when Content-Encoding says gzip. INGEST_MAX_BODY_BYTES
 * bounds both what arrives and what it inflates to (a small gzip bomb is refused as it grows).
 */
export async function readOtlpBody(request: Request, maxBytes: number): Promise<Uint8Array> {
  const declared = request.headers.get("content-length");
  if (declared !== null && Number(declared) > maxBytes) throw tooLarge(maxBytes);
  const coding = (request.headers.get("content-encoding") ?? "identity").trim().toLowerCase();
  if (coding !== "identity" && coding !== "gzip") throw new HttpError(415, `content-encoding ${JSON.stringify(coding.slice(0, 50))} is not supported; use gzip or none`);
  if (!request.body) return new Uint8Array(0);
  const wire = await readCapped(request.body, maxBytes);
  if (coding === "identity") return wire;
  try {
    return await readCapped(new Blob([wire as BlobPart]).stream().pipeThrough(new DecompressionStream("gzip")), maxBytes);
  } catch (err) {
    if (err instanceof HttpError) throw err;
    throw new HttpError(400, "body is not valid gzip");
  }
}

async function readCapped(stream: ReadableStream<Uint8Array>, maxBytes: number): Promise<Uint8Array> {
  const reader = stream.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    total += value.byteLength;
    if (total > maxBytes) {
      await reader.cancel().catch(() => {});
      throw tooLarge(maxBytes);
    }
    chunks.push(value);
  }
  if (chunks.length === 1) return chunks[0];
  const out = new Uint8Array(total);
  let at = 0;
  for (const c of chunks) {
    out.set(c, at);
    at += c.byteLength;
  }
  return out;
}
