import type postgres from "postgres";
import { monitorsConsumer } from "@cellar/shared/nats/catalogue";
import { consume, type ConsumeDeps, type ConsumeLoop } from "@cellar/shared/nats/consume";
import { isMonitorEvent, maturationsOf, type MaturedMessage, type MonitorEventMessage } from "@cellar/shared/payloads";
import { createMonitorCache, evaluateMaturations } from "./evaluate.ts";
import { evaluateLossMonitors } from "./loss.ts";
import { publishMonitorEvents, relayUnpublished, type OutboxDeps } from "./outbox.ts";

/** A new or changed monitor applies to maturations from at most this long after it was saved. */
export const DEFINITIONS_CACHE_MS = 5_000;

export interface MonitorOptions {
  /** How long a service's monitor definitions are cached (default 5 s). */
  definitionsCacheMs?: number;
  /** How often the outbox relay looks for unpublished state changes (default 10 s). */
  relayIntervalMs?: number;
  /** MATURED messages in hand (default 64): those of one service are evaluated together. */
  concurrency?: number;
  /** Runs after a state change committed, before it is published (tests: a crash right there). */
  afterStateCommit?: (events: MonitorEventMessage[]) => Promise<void> | void;
}

/**
 * Monitor evaluation (docs/monitors.md): the `processor-monitors` consumer of MATURED evaluates
 * each maturation against its service's monitors, publishes the notifying state changes, and a
 * relay publishes what a crash left in the outbox (at start, then every `relayIntervalMs`).
 */
export function startMonitorEvaluation(
  deps: OutboxDeps & { runtime: ConsumeDeps; options?: MonitorOptions },
): ConsumeLoop {
  const o = deps.options ?? {};
  const monitorsOf = createMonitorCache(deps.sql as postgres.Sql, o.definitionsCacheMs ?? DEFINITIONS_CACHE_MS);
  const evaluate = coalescePerService(async (batch) => {
    const events = await evaluateMaturations(deps.sql, monitorsOf, batch);
    if (events.length === 0) return;
    await o.afterStateCommit?.(events);
    await publishMonitorEvents(deps, events);
  });
  const loop = consume(monitorsConsumer, deps.runtime, {
    each: { maxInFlight: o.concurrency ?? 64 },
    async handle({ value }) {
      if (value === null || isMonitorEvent(value)) return "ack"; // invalid (the dispatcher parks it), or our own output
      await Promise.all(maturationsOf(value).map(evaluate)); // one, or a batch's traces
    },
  });
  let relaying: Promise<unknown> = Promise.resolve();
  const relay = () => {
    relaying = relayUnpublished(deps)
      // The ledger's `loss` monitors: on this timer, not per maturation (loss.ts).
      .then(() => evaluateLossMonitors(deps))
      .catch((err) => deps.logger.warn("monitor outbox relay failed; next pass retries", { err: err as Error }));
  };
  relay();
  const timer = setInterval(relay, o.relayIntervalMs ?? 10_000);
  return {
    async stop() {
      clearInterval(timer);
      await loop.stop();
      await relaying;
    },
  };
}

/**
 * Runs `work` for one service at a time with every maturation of that service that arrived while
 * the previous run was busy: a burst of N maturations costs a few evaluations, not N (each reads
 * the whole window of every monitor), and no connection waits on the service's lock meanwhile.
 * Each caller's promise settles with the run that included its message (a failure fails them
 * all: each message is then retried by the consume runtime).
 */
export function coalescePerService(work: (batch: MaturedMessage[]) => Promise<void>) {
  const queues = new Map<string, Array<{ m: MaturedMessage; done: (err?: unknown) => void }>>();
  const drain = async (service: string) => {
    for (;;) {
      const taken = queues.get(service)!;
      if (taken.length === 0) {
        queues.delete(service);
        return;
      }
      queues.set(service, []);
      try {
        await work(taken.map((t) => t.m));
        for (const t of taken) t.done();
      } catch (err) {
        for (const t of taken) t.done(err);
      }
    }
  };
  return (m: MaturedMessage) =>
    new Promise<void>((resolve, reject) => {
      const done = (err?: unknown) => (err === undefined ? resolve() : reject(err));
      const queue = queues.get(m.traceServiceId);
      if (queue) queue.push({ m, done });
      else {
        queues.set(m.traceServiceId, [{ m, done }]);
        void drain(m.traceServiceId);
      }
    });
}
