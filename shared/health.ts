import { Elysia } from "elysia";
import type postgres from "postgres";
import type { JetStreamManager } from "@nats-io/jetstream";
import type { NatsConnection } from "@nats-io/transport-node";
import { jsonResponse } from "./http";

/** A dependency the app needs to do its work; `probe` rejects when it cannot be reached. */
export interface ReadinessCheck {
  name: string;
  probe: () => Promise<unknown>;
}

/** A probe gives up after this long: /ready answers within a few seconds whatever hangs. */
export const PROBE_TIMEOUT_MS = 2_000;

/**
 * At most one probe in flight per dependency and timeout period: a Postgres that stopped
 * answering (SIGSTOP) holds every query it got, and a load balancer polling /ready must not fill
 * the pool with them. A probe older than the timeout is abandoned, not shared: one stuck on a
 * dead connection must not keep /ready failing after the dependency is back.
 */
function singleFlight(probe: () => Promise<unknown>): () => Promise<unknown> {
  let running: { p: Promise<unknown>; at: number } | undefined;
  return () => {
    if (!running || Date.now() - running.at > PROBE_TIMEOUT_MS) {
      const mine = { p: probe().finally(() => running === mine && (running = undefined)), at: Date.now() };
      running = mine;
    }
    return running.p;
  };
}

function withTimeout<T>(p: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} did not answer within ${ms} ms`)), ms);
  });
  return Promise.race([p, timeout]).finally(() => clearTimeout(timer));
}

/** Postgres answers a trivial query. */
export function postgresCheck(sql: postgres.Sql): ReadinessCheck {
  return { name: "postgres", probe: singleFlight(() => sql`select 1`) };
}

/** The NATS connection is up and JetStream answers (a meta leader exists in a cluster). */
export function natsCheck(nc: NatsConnection, jsm: JetStreamManager): ReadinessCheck {
  return {
    name: "nats",
    probe: singleFlight(async () => {
      if (nc.isClosed()) throw new Error("connection closed");
      await jsm.getAccountInfo();
    }),
  };
}

/** Runs every check at once; `failed` names those that rejected or timed out. */
export async function checkReadiness(checks: ReadinessCheck[], timeoutMs = PROBE_TIMEOUT_MS) {
  const results = await Promise.all(
    checks.map(async (c) => {
      try {
        await withTimeout(c.probe(), timeoutMs, c.name);
        return [c.name, "ok"] as const;
      } catch (err) {
        return [c.name, String((err as Error)?.message ?? err).slice(0, 200)] as const;
      }
    }),
  );
  const failed = results.filter(([, r]) => r !== "ok").map(([n]) => n);
  return { ready: failed.length === 0, failed, checks: Object.fromEntries(results) };
}

/**
 * `GET /ready`: 200 `{"status":"ready","checks":{...}}` when every dependency answers, else 503
 * with the contract's error shape naming them. `/health` (the process is alive) stays separate:
 * an orchestrator restarts on /health and only stops routing on /ready.
 */
export function readyRoute(checks: ReadinessCheck[]) {
  return new Elysia({ name: "cellar-ready" }).get("/ready", async () => {
    const r = await checkReadiness(checks);
    if (r.ready) return jsonResponse(200, { status: "ready", checks: r.checks });
    return jsonResponse(503, { error: `not ready: ${r.failed.join(", ")} unreachable`, checks: r.checks }, { "retry-after": "2" });
  });
}

/**
 * `/health` and `/ready` on a port of their own, for the apps without an HTTP API (processor,
 * dispatcher). Port 0 picks a free one.
 */
export function serveHealth(port: number, checks: ReadinessCheck[]) {
  return new Elysia({ name: "cellar-health" })
    .get("/health", () => ({ status: "ok" }))
    .use(readyRoute(checks))
    .listen({ port, hostname: "0.0.0.0" });
}
