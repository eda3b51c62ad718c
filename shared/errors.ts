/** Errors that map onto the contract's `{"error": "..."}` bodies. */
export class HttpError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly headers: Record<string, string> = {},
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = "HttpError";
  }
}

/** The one bare body every authentication failure gets (contract: Authentication rule 4). */
export const UNAUTHORIZED_BODY = { error: "unauthorized" } as const;

export const badRequest = (message: string) => new HttpError(400, message);
export const unauthorized = () => new HttpError(401, UNAUTHORIZED_BODY.error);
export const paymentRequired = (message: string) => new HttpError(402, message);
export const forbidden = (message = "forbidden") => new HttpError(403, message);
export const notFound = (message = "not found") => new HttpError(404, message);
export const serviceUnavailable = (message: string, retryAfterSeconds: number) =>
  new HttpError(503, message, { "retry-after": String(retryAfterSeconds) });

/** An admin operation's input is refused: the admin CLI prints the message (it names the flag). */
export class AdminError extends Error {
  override name = "AdminError";
  /** What the platform answers with when the dashboard calls it: 400 bad input, 404 no such row, 409 a conflict. */
  constructor(
    message: string,
    readonly status: 400 | 404 | 409 = 400,
  ) {
    super(message);
  }
}
