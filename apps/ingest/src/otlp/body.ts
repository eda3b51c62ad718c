import { HttpError } from "@cellar/shared/errors";
import { readCapped, tooLarge } from "../body.ts";

/**
 * The request body as bytes, gunzipped when Content-Encoding says gzip. INGEST_MAX_BODY_BYTES
 * bounds both what arrives and what it inflates to (a small gzip bomb is refused as it grows).
 */
export async function readOtlpBody(request: Request, maxBytes: number): Promise<Uint8Array> {
  const declared = request.headers.get("content-length");
  if (declared !== null && Number(declared) > maxBytes) throw tooLarge(maxBytes);
  const coding = (request.headers.get("content-encoding") ?? "identity").trim().toLowerCase();
  if (coding !== "identity" && coding !== "gzip")
    throw new HttpError(
      415,
      `content-encoding ${JSON.stringify(coding.slice(0, 50))} is not supported; use gzip or none`,
    );
  const wire = await readCapped(request.body, maxBytes);
  if (coding === "identity" || wire.byteLength === 0) return wire;
  try {
    return await readCapped(
      new Blob([wire as BlobPart]).stream().pipeThrough(new DecompressionStream("gzip")),
      maxBytes,
    );
  } catch (err) {
    if (err instanceof HttpError) throw err;
    throw new HttpError(400, "body is not valid gzip");
  }
}
