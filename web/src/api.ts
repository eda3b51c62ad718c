/**
 * The dashboard's one way to the server: /api/v1 (the same API every client reads) and /auth
 * (sign-in), with the sign-in token as `Authorization: Bearer`. A 401 anywhere means the token
 * expired or was revoked: it is dropped and the app shows the sign-in page.
 */
const TOKEN_KEY = "cellar.dashboard.token";

export class ApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

export const session = {
  get token(): string | null {
    return localStorage.getItem(TOKEN_KEY);
  },
  set(token: string) {
    localStorage.setItem(TOKEN_KEY, token);
  },
  clear() {
    localStorage.removeItem(TOKEN_KEY);
  },
};

let onUnauthorized: (() => void) | undefined;
/** The app registers how to react to an expired token (back to the sign-in page). */
export function whenUnauthorized(fn: () => void) {
  onUnauthorized = fn;
}

async function call<T>(url: string, init: { method?: string; body?: unknown; signal?: AbortSignal } = {}): Promise<T> {
  const headers: Record<string, string> = {};
  if (session.token) headers.authorization = `Bearer ${session.token}`;
  if (init.body !== undefined) headers["content-type"] = "application/json";
  const res = await fetch(url, {
    method: init.method ?? (init.body !== undefined ? "POST" : "GET"),
    headers,
    body: init.body === undefined ? undefined : JSON.stringify(init.body),
    signal: init.signal,
  });
  if (res.status === 204) return undefined as T;
  const text = await res.text();
  let data: any = null;
  try {
    data = text ? JSON.parse(text) : null;
  } catch {
    data = { error: text };
  }
  if (!res.ok) {
    if (res.status === 401 && session.token && !url.startsWith("/auth/sign-in")) {
      session.clear();
      onUnauthorized?.();
    }
    throw new ApiError(res.status, data?.error ?? `HTTP ${res.status}`);
  }
  return data as T;
}

export const api = <T = any>(path: string, init?: { method?: string; body?: unknown; signal?: AbortSignal }) =>
  call<T>(`/api/v1${path}`, init);
export const auth = <T = any>(path: string, init?: { method?: string; body?: unknown }) =>
  call<T>(`/auth${path}`, init);

export const enc = encodeURIComponent;

export interface Me {
  user: { id: string; email: string; role: "viewer" | "member" | "admin" | "owner" };
  tenant: { id: string; name: string; plan: string; webhooksEnabled: boolean };
  services: Array<{ id: string; name: string; project: string }>;
  expiresAt: string;
}

export const isAdmin = (me: Me) => me.user.role === "admin" || me.user.role === "owner";
