import { DATABASE_DOWN_RETRY_AFTER_SECONDS } from "./database-errors.ts";

/**
 * How long any platform request may take before it is answered 503 (docs/platform-api.md,
 * "Limits"). The statement timeout cannot bound a Postgres that stopped answering (SIGSTOP, a
 * network partition): the server enforces it, and postgres.js has no client-side deadline for a
 * query already sent. So the request itself has one; the abandoned query finishes or fails in
 * the background and frees its connection when Postgres answers again.
 */
export const PLATFORM_REQUEST_DEADLINE_MS = 4_500;

type Fetch = (request: Request) => Response | Promise<Response>;

/** `fetch` answered within `deadlineMs`, or a 503 with Retry-After in the contract's error shape. */
export function withDeadline(fetch: Fetch, deadlineMs: number): Fetch {
  return (request) => {
    let timer: ReturnType<typeof setTimeout> | undefined;
    const late = new Promise<Response>((resolve) => {
      timer = setTimeout(
        () =>
          resolve(
            Response.json(
              { error: "the database did not answer in time; retry later" },
              { status: 503, headers: { "retry-after": String(DATABASE_DOWN_RETRY_AFTER_SECONDS) } },
            ),
          ),
        deadlineMs,
      );
    });
    const answer = Promise.resolve(fetch(request));
    // The abandoned handler's failure is already logged by the app's error handler.
    answer.catch(() => {});
    return Promise.race([answer, late]).finally(() => clearTimeout(timer));
  };
}
