/**
 * A scripted ingest host for the SDK's unit tests: a fetch that records every batch and answers
 * from a script (status, headers, or a thrown network error), then 200 with every item accepted.
 */
export interface Recorded {
  at: number;
  url: string;
  headers: Record<string, string>;
  items: Array<{ type: string; body: any }>;
  /** The envelope's ledger report (docs/sdks.md "The ledger"). */
  ledger: any;
  keepalive: boolean;
}

type Step = { status: number; headers?: Record<string, string>; body?: unknown } | "network-error" | "refuse-odd";

export function fakeIngest(script: Step[] = []) {
  const requests: Recorded[] = [];
  const fetch = (async (url: string, init: RequestInit) => {
    const headers = Object.fromEntries(new Headers(init.headers).entries());
    let text: string;
    if (headers["content-encoding"] === "gzip") {
      const stream = new Blob([init.body as BlobPart]).stream().pipeThrough(new DecompressionStream("gzip"));
      text = await new Response(stream).text();
    } else text = init.body as string;
    const { items, ledger } = JSON.parse(text);
    requests.push({ at: Date.now(), url, headers, items, ledger, keepalive: Boolean(init.keepalive) });
    const step = script.shift();
    if (step === "network-error") throw new TypeError("fetch failed");
    if (step === "refuse-odd")
      return Response.json({
        status: "partial",
        items: items.map((_: unknown, i: number) =>
          i % 2 ? { status: "refused", error: "invalid body.session_id: required" } : { status: "accepted" },
        ),
      });
    if (step) return Response.json(step.body ?? { error: `scripted ${step.status}` }, step);
    return Response.json({ status: "success", items: items.map(() => ({ status: "accepted" })) });
  }) as unknown as typeof globalThis.fetch;
  return { fetch, requests, items: () => requests.flatMap((r) => r.items) };
}

export const DSN = `svc-ing-s-${Buffer.from(JSON.stringify({ v: 1, e: "http://ingest.test", s: "bot" })).toString("base64url")}.${"x".repeat(32)}`;
