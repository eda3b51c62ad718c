/** What a test checks of an HTTP answer against an OpenAPI document (the openapi tests). */
export interface Answered {
  status: number;
  retryAfter: string | null;
  contentType: string | null;
  /** The parsed JSON body, or the text when it is not JSON. */
  body: any;
}

/** A response read once into what the OpenAPI tests compare with the document. */
export async function answered(res: Response): Promise<Answered> {
  const text = await res.text();
  let body: any = text;
  try {
    body = JSON.parse(text);
  } catch {}
  return {
    status: res.status,
    retryAfter: res.headers.get("retry-after"),
    contentType: res.headers.get("content-type"),
    body,
  };
}
