import Ajv2020, { type ValidateFunction } from "ajv/dist/2020";
import addFormats from "ajv-formats";

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

// Ajv for JSON Schema 2020-12, the dialect of OpenAPI 3.1 (strict off: the documents carry
// annotations such as `description` beside keywords, and TypeBox's own keys are dropped).
const ajv = new Ajv2020({ strict: false });
addFormats(ajv);
const compiled = new Map<string, ValidateFunction>();

/**
 * Why `body` does not match the response `schema` a document lists for it (null when it does).
 * `components`: the document's, for `$ref`s into them.
 */
export function bodyProblem(schema: unknown, body: unknown, components: unknown = {}): string | null {
  const key = JSON.stringify(schema);
  let validate = compiled.get(key);
  if (!validate) {
    validate = ajv.compile({ ...(schema as object), components } as object);
    compiled.set(key, validate);
  }
  if (validate(body)) return null;
  const [first] = validate.errors ?? [];
  return `${first?.instancePath || "/"} ${first?.message ?? "does not match"}`;
}
