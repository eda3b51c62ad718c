import { HttpError } from "@cellar/shared/errors";
import { readCapped } from "@cellar/shared/read-capped";

/**
 * Largest request body the platform reads (64 KiB). Its largest request, a sessions search with
 * every filter at its maximum, is a few KiB; the cap bounds what an authenticated caller can
 * make the server hold and parse. Unauthenticated bodies are never read at all.
 */
export const PLATFORM_MAX_BODY_BYTES = 64 * 1024;

const tooLarge = (max: number) => new HttpError(413, `request body exceeds ${max} bytes`);

/**
 * The body as text, reading no more than `max` bytes: a declared Content-Length over the cap is
 * refused before reading, and a chunked body is cancelled as soon as it passes the cap.
 */
export async function readCappedText(request: Request, max = PLATFORM_MAX_BODY_BYTES): Promise<string> {
  const declared = Number(request.headers.get("content-length"));
  if (Number.isFinite(declared) && declared > max) throw tooLarge(max);
  return new TextDecoder().decode(await readCapped(request.body, max, () => tooLarge(max)));
}

/** A capped body parsed as JSON (empty = undefined); bad JSON is the usual 400. */
export async function readCappedJson(request: Request, max = PLATFORM_MAX_BODY_BYTES): Promise<unknown> {
  const text = await readCappedText(request, max);
  if (text.trim() === "") return undefined;
  try {
    return JSON.parse(text);
  } catch {
    throw new HttpError(400, "body is not valid JSON");
  }
}
