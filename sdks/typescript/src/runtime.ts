/**
 * Where the SDK runs, and the hooks that send what is queued before the runtime stops: Node and
 * Bun (`beforeExit`: the event loop is empty, more work may still be scheduled), Deno
 * (`beforeunload`, same semantics), browsers (`visibilitychange` to hidden and `pagehide`, sent
 * with keepalive so the request outlives the page).
 */

declare const Deno: unknown;

export function isBrowser(): boolean {
  return typeof window !== "undefined" && typeof document !== "undefined";
}

/** Installs the hooks; returns their removal. `send(keepalive)` flushes. */
export function installExitHooks(send: (keepalive: boolean) => void, pending: () => number): () => void {
  const g = globalThis as any;
  if (isBrowser()) {
    const onHidden = () => {
      if (document.visibilityState === "hidden" && pending() > 0) send(true);
    };
    const onPageHide = () => {
      if (pending() > 0) send(true);
    };
    document.addEventListener("visibilitychange", onHidden);
    g.addEventListener("pagehide", onPageHide);
    return () => {
      document.removeEventListener("visibilitychange", onHidden);
      g.removeEventListener("pagehide", onPageHide);
    };
  }
  const onExit = () => {
    if (pending() > 0) send(false);
  };
  if (typeof Deno !== "undefined" && typeof g.addEventListener === "function") {
    g.addEventListener("beforeunload", onExit);
    return () => g.removeEventListener("beforeunload", onExit);
  }
  if (typeof g.process?.on === "function") {
    g.process.on("beforeExit", onExit);
    return () => g.process.off?.("beforeExit", onExit);
  }
  return () => {};
}
