import { Counter, Gauge, Histogram, Registry } from "prom-client";
import type { JetStreamManager } from "@nats-io/jetstream";
import type postgres from "postgres";

/**
 * One Prometheus registry per app process (never prom-client's global one: tests build several
 * apps in one process). Every series carries `app`. Figures that live elsewhere (JetStream
 * consumer state, Postgres connections) are read when scraped, so they are true even when the
 * code that moves them changes.
 */
export function createMetrics(app: string) {
  const registry = new Registry();
  registry.setDefaultLabels({ app });
  const registers = [registry];

  const httpRequests = new Counter({
    name: "cellar_http_requests_total",
    help: "HTTP requests answered, by route pattern, method and status",
    labelNames: ["route", "method", "status"] as const,
    registers,
  });
  const httpDuration = new Histogram({
    name: "cellar_http_request_duration_seconds",
    help: "Time to answer an HTTP request (until the response headers), by route pattern, method and status",
    labelNames: ["route", "method", "status"] as const,
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    registers,
  });
  const maturations = new Counter({
    name: "cellar_maturations_total",
    help: "Maturation attempts by entity kind and outcome (matured, republished, already-published, still-active, missing)",
    labelNames: ["kind", "outcome"] as const,
    registers,
  });
  const maturationLateness = new Histogram({
    name: "cellar_maturation_lateness_seconds",
    help: "From the moment an entity became due (its activity key expired) to its maturation being done",
    buckets: [0.1, 0.25, 0.5, 1, 2, 5, 10, 30, 60, 120, 300, 900, 3600],
    registers,
  });
  const webhookAttempts = new Counter({
    name: "cellar_webhook_attempts_total",
    help: "Webhook delivery attempts by outcome: delivered, retry (will be tried again), failed (no more attempts)",
    labelNames: ["outcome"] as const,
    registers,
  });

  const ingestDeadLetters = new Counter({
    name: "cellar_ingest_dead_letters_total",
    help: "INGEST messages dead-lettered by this process, by tenant: data a client was told is stored that did not land",
    labelNames: ["tenant"] as const,
    registers,
  });

  const ledgerItems = new Counter({
    name: "cellar_ledger_items_total",
    help: "Ledger counts this process added (docs/ledger.md), by stage (sdk_requested, sdk_dropped, accepted, refused, stored, dead_lettered, replayed) and reason (door, refusal reason, drop reason, kind)",
    labelNames: ["stage", "reason"] as const,
    registers,
  });
  const ledgerImbalance = new Gauge({
    name: "cellar_ledger_imbalance_items",
    help: "Per tenant, items the last reconciliation could not account for (accepted - stored - dead-lettered + replayed beyond what is in flight; stored traces without their row): should stay 0",
    labelNames: ["tenant", "check"] as const,
    registers,
  });
  const ledgerUnbalanced = new Gauge({
    name: "cellar_ledger_unbalanced_tenants",
    help: "Tenants whose books did not balance at the last reconciliation",
    registers,
  });

  const ingestOffloadJobs = new Counter({
    name: "cellar_ingest_offload_jobs_total",
    help: "Large admitted requests handed to ingest's offload threads (docs/ingestion.md), by task (otlp, batch) and outcome: done on a thread; declined (too many waiting, or stopping), failed or timed_out, each then done on the event loop",
    labelNames: ["task", "outcome"] as const,
    registers,
  });

  return {
    registry,
    /** One offload job's outcome (apps/ingest/src/offload/pool.ts observe). */
    ingestOffload(task: string, outcome: "done" | "declined" | "failed" | "timed_out") {
      ingestOffloadJobs.inc({ task, outcome });
    },
    /** A ledger count (shared/ledger/counter.ts observe). */
    ledgerCount(stage: string, reason: string, n: number) {
      ledgerItems.inc({ stage, reason }, n);
    },
    /** The reconciliation's verdicts: one gauge per unbalanced tenant and check, the rest cleared. */
    ledgerReconciled(unbalanced: Array<{ tenant: string; check: string; items: number }>) {
      ledgerImbalance.reset();
      for (const u of unbalanced) ledgerImbalance.set({ tenant: u.tenant, check: u.check }, u.items);
      ledgerUnbalanced.set(new Set(unbalanced.map((u) => u.tenant)).size);
    },
    observeHttp(route: string, method: string, status: number, seconds: number) {
      const labels = { route, method, status: String(status) };
      httpRequests.inc(labels);
      httpDuration.observe(labels, seconds);
    },
    maturation(kind: string, outcome: string, count = 1) {
      maturations.inc({ kind, outcome }, count);
    },
    maturationLateness(seconds: number) {
      maturationLateness.observe(Math.max(0, seconds));
    },
    webhookAttempt(outcome: "delivered" | "retry" | "failed") {
      webhookAttempts.inc({ outcome });
    },
    /** One INGEST dead letter; a tenant that is not a uuid (an unreadable message) counts as `unknown`. */
    ingestDeadLetter(tenant: string | undefined) {
      ingestDeadLetters.inc({ tenant: tenant && UUID.test(tenant) ? tenant.toLowerCase() : "unknown" });
    },
    /** Pending, ack-pending and redelivered counts of these durable consumers, read at scrape. */
    watchConsumers(jsm: JetStreamManager, consumers: Array<{ stream: string; name: string }>, timeoutMs = 2_000) {
      const names = ["pending", "ack_pending", "redelivered", "waiting"] as const;
      const help: Record<(typeof names)[number], string> = {
        pending: "Messages in the stream not yet delivered to this consumer (JetStream num_pending)",
        ack_pending: "Messages delivered and not yet acknowledged (num_ack_pending)",
        redelivered: "Messages delivered more than once and not yet acknowledged (num_redelivered)",
        waiting: "Pull requests waiting at the server (num_waiting)",
      };
      const read = oneReadAtATime(async () => {
        const out = new Map<string, { pending: number; ack_pending: number; redelivered: number; waiting: number }>();
        await Promise.all(
          consumers.map(async (c) => {
            try {
              const info = await withTimeout(jsm.consumers.info(c.stream, c.name), timeoutMs);
              out.set(`${c.stream}/${c.name}`, {
                pending: info.num_pending,
                ack_pending: info.num_ack_pending,
                redelivered: info.num_redelivered,
                waiting: info.num_waiting,
              });
            } catch {
              // No figure rather than a stale one; cellar_consumer_info_up says it failed.
            }
          }),
        );
        return out;
      });
      const up = new Gauge({
        name: "cellar_consumer_info_up",
        help: "1 when the consumer's state could be read from JetStream at this scrape",
        labelNames: ["stream", "consumer"] as const,
        registers,
        async collect() {
          const state = await read();
          for (const c of consumers)
            this.set({ stream: c.stream, consumer: c.name }, state.has(`${c.stream}/${c.name}`) ? 1 : 0);
        },
      });
      for (const name of names) {
        new Gauge({
          name: `cellar_consumer_${name}`,
          help: help[name],
          labelNames: ["stream", "consumer"] as const,
          registers,
          async collect() {
            this.reset();
            const state = await read();
            for (const c of consumers) {
              const s = state.get(`${c.stream}/${c.name}`);
              if (s) this.set({ stream: c.stream, consumer: c.name }, s[name]);
            }
          },
        });
      }
      return up;
    },
    /**
     * Dead letters stored per source stream (DEAD_LETTERS holds them 30 days or until an operator
     * replays or purges them): a count that should stay 0, read at scrape.
     */
    watchDeadLetters(
      jsm: JetStreamManager,
      deadLetterStream: string,
      sources: Array<{ stream: string; subject: string }>,
      timeoutMs = 2_000,
    ) {
      new Gauge({
        name: "cellar_dead_letters",
        help: "Messages a consumer gave up on, stored in the dead-letter stream, by source stream",
        labelNames: ["stream"] as const,
        registers,
        async collect() {
          this.reset();
          await Promise.all(
            sources.map(async (s) => {
              try {
                const info = await withTimeout(
                  jsm.streams.info(deadLetterStream, { subjects_filter: s.subject }),
                  timeoutMs,
                );
                this.set({ stream: s.stream }, info.state.subjects?.[s.subject] ?? 0);
              } catch {
                // No figure rather than a wrong one.
              }
            }),
          );
        },
      });
    },
    /**
     * Connections of this process's pools as Postgres sees them (postgres.js keeps its pool state
     * private): by state (active = running a query, idle, ...), next to the configured maximum.
     * `applicationName` must be unique to the process (lifecycle.ts appends a random suffix).
     */
    watchPostgresPool(sql: postgres.Sql, applicationName: string, maxConnections: number) {
      new Gauge({
        name: "cellar_postgres_pool_max",
        help: "Configured connections per pool, summed over the process's pools",
        registers,
      }).set(maxConnections);
      const read = oneReadAtATime(async () => {
        const rows = await withTimeout(
          sql<{ state: string; n: number }[]>`
          select coalesce(state, 'unknown') as state, count(*)::int as n from pg_stat_activity
          where application_name = ${applicationName} and pid <> pg_backend_pid() group by 1`,
          2_000,
        );
        return rows;
      });
      new Gauge({
        name: "cellar_postgres_pool_connections",
        help: "Open connections of this process, by state (pg_stat_activity)",
        labelNames: ["state"] as const,
        registers,
        async collect() {
          this.reset();
          for (const state of ["active", "idle", "idle in transaction"]) this.set({ state }, 0);
          try {
            for (const r of await read()) this.set({ state: r.state }, r.n);
          } catch {
            this.reset();
          }
        },
      });
    },
  };
}
export type AppMetrics = ReturnType<typeof createMetrics>;

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Concurrent scrapes (and the several gauges of one scrape) share one read. */
function oneReadAtATime<T>(fn: () => Promise<T>): () => Promise<T> {
  let current: Promise<T> | undefined;
  return () => (current ??= fn().finally(() => setTimeout(() => (current = undefined), 250)));
}

export function withTimeout<T>(p: Promise<T>, ms: number): Promise<T> {
  let timer: ReturnType<typeof setTimeout>;
  return Promise.race([
    p,
    new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms))),
  ]).finally(() => clearTimeout(timer));
}
