/**
 * What the provider wrappers share: a Proxy that swaps one method of one resource, and the
 * hooks that watch a call's result without changing it (same promise object, same stream
 * object, same errors). Nothing here may throw into the caller's path.
 */

import { Cellar, type CellarOptions } from "./index.ts";
import type { TraceInput } from "./types.ts";

export interface WrapOptions {
  /** The session every call belongs to: a string, or a function read at each call (undefined: not traced). */
  sessionId: string | (() => string | undefined);
  /** Sent as the traces' `environment` (else the client's). */
  environment?: string;
}

/**
 * `client` seen through a Proxy whose `path` (e.g. ["chat", "completions", "create"]) is
 * `wrap(original, owner)`; everything else is the client's own (methods bound to the real
 * objects, so private fields keep working).
 */
export function proxyMethod<T extends object>(
  client: T,
  path: readonly string[],
  wrap: (original: (...args: unknown[]) => unknown, owner: object) => (...args: unknown[]) => unknown,
): T {
  const [head, ...rest] = path;
  let cache: { of: unknown; proxy: unknown } | null = null;
  return new Proxy(client, {
    get(target, prop) {
      const value = Reflect.get(target, prop);
      if (prop !== head) return typeof value === "function" ? value.bind(target) : value;
      if (rest.length === 0 ? typeof value !== "function" : value === null || typeof value !== "object") return value;
      if (cache?.of !== value)
        cache = {
          of: value,
          proxy: rest.length === 0 ? wrap(value as never, target) : proxyMethod(value as object, rest, wrap),
        };
      return cache.proxy;
    },
  });
}

/**
 * Watches a provider call's result. Stainless clients (openai, @anthropic-ai/sdk) return an
 * APIPromise that parses the body only when asked: hooking its `parse` keeps that (a caller using
 * `.asResponse()` alone gets the raw body untouched; its call is then not traced).
 */
export function watchResult(result: unknown, onValue: (value: any) => void): void {
  const p = result as { parse?: (...a: unknown[]) => Promise<unknown>; then?: unknown };
  const safe = (value: unknown) => {
    try {
      onValue(value);
    } catch {}
  };
  if (typeof p?.parse === "function") {
    const parse = p.parse;
    let hooked = false;
    p.parse = function (this: unknown, ...args: unknown[]) {
      const parsed = parse.apply(this, args);
      if (!hooked) {
        hooked = true;
        parsed.then(safe, () => {});
      }
      return parsed;
    };
  } else if (typeof p?.then === "function") {
    (p as Promise<unknown>).then(safe, () => {});
  }
}

/**
 * Makes a provider Stream report its chunks: the stream object stays the same, its `iterator`
 * (which `for await`, `tee()` and `toReadableStream()` all use) yields the same chunks through
 * `onChunk`, then calls `onEnd` once when the stream ends (not when it is abandoned or fails).
 */
export function watchStream(stream: any, onChunk: (chunk: any) => void, onEnd: () => void): void {
  if (!stream || typeof stream.iterator !== "function") return;
  const original = stream.iterator;
  stream.iterator = function (this: unknown) {
    const inner: AsyncIterator<unknown> = original.call(this);
    // The iterator itself, its `next` watched: no generator of ours in between (one promise
    // reaction per chunk), and return()/throw() stay the client's own.
    const next = inner.next;
    let ended = false;
    inner.next = function (this: unknown, ...args: [] | [unknown]) {
      return next.apply(this, args).then((step) => {
        try {
          if (!step.done) onChunk(step.value);
          else if (!ended) {
            ended = true;
            onEnd();
          }
        } catch {}
        return step;
      });
    };
    return inner;
  };
}

/** A wrapper's client: the `Cellar` given, or one made from its options (the README's three-line start). */
export function cellarOf(cellar: Cellar | CellarOptions): Cellar {
  return cellar instanceof Cellar ? cellar : new Cellar(cellar);
}

export function sessionOf(options: WrapOptions): string | undefined {
  try {
    return typeof options.sessionId === "function" ? options.sessionId() : options.sessionId;
  } catch {
    return undefined;
  }
}

/** The wrapper's common shape: resolve the session, call, and watch unless sampled out. */
export function traced(
  cellar: Cellar,
  options: WrapOptions,
  original: (...args: unknown[]) => unknown,
  resource: object,
  observe: (params: any, result: unknown, emit: (t: Omit<TraceInput, "session_id" | "start_time">) => void) => void,
): (...args: unknown[]) => unknown {
  return function (this: unknown, ...args: unknown[]) {
    const result = Reflect.apply(original, resource, args);
    try {
      const sessionId = sessionOf(options);
      if (sessionId === undefined || !cellar.sampled(sessionId)) return result;
      const start = new Date();
      observe(args[0], result, (t) =>
        cellar.trace({
          environment: options.environment,
          ...t,
          session_id: sessionId,
          start_time: start,
        } as unknown as TraceInput),
      );
    } catch {}
    return result;
  };
}
