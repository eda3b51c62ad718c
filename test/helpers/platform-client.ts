/**
 * The platform API over HTTP as a tenant's client calls it: its platform key as `Token`, JSON in
 * and out. The one client of every test that talks to a running platform (a process, a compose
 * stack); tests of the app in-process use `stack.platformRequest` and `call` (platform.ts).
 * `baseUrl` ends in `/api/v1`.
 */
export function platformClient(baseUrl: string, platformKey: string) {
  /** The answer as it came (status, headers, body unread). */
  const request = (path: string, init: RequestInit = {}) =>
    fetch(`${baseUrl}${path}`, {
      ...init,
      headers: { authorization: `Token ${platformKey}`, "content-type": "application/json", ...init.headers },
    });
  /** The status and the parsed body (null when it is not JSON). */
  const call = async (path: string, method = "GET", body?: unknown): Promise<{ status: number; body: any }> => {
    const res = await request(path, { method, body: body === undefined ? undefined : JSON.stringify(body) });
    return { status: res.status, body: await res.json().catch(() => null) };
  };
  return { request, call };
}
