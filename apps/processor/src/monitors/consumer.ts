import type postgres from "postgres";
import { monitorsConsumer } from "@cellar/shared/nats/catalogue";
import { consume, type ConsumeDeps, type ConsumeLoop } from "@cellar/shared/nats/consume";
import { isMonitorEvent, type MonitorEventMessage } from "@cellar/shared/payloads";
import { createMonitorCache, evaluateMaturation } from "./evaluate.ts";
import { publishMonitorEvents, relayUnpublished, type OutboxDeps } from "./outbox.ts";

export interface MonitorOptions {
  /** How long a service's monitor definitions are cached (default 5 s). */
  definitionsCacheMs?: number;
  /** How often the outbox relay looks for unpublished state changes (default 10 s). */
  relayIntervalMs?: number;
  /** Evaluations in flight (default 16). */
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
  const monitorsOf = createMonitorCache(deps.sql as postgres.Sql, o.definitionsCacheMs ?? 5_000);
  const loop = consume(monitorsConsumer, deps.runtime, {
    each: { maxInFlight: o.concurrency ?? 16 },
    async handle({ value }) {
      if (isMonitorEvent(value)) return "ack"; // our own output, for the dispatcher
      const events = await evaluateMaturation(deps.sql, monitorsOf, value);
      if (events.length === 0) return;
      await o.afterStateCommit?.(events);
      await publishMonitorEvents(deps, events);
    },
  });
  let relaying: Promise<unknown> = Promise.resolve();
  const relay = () => {
    relaying = relayUnpublished(deps).catch((err) =>
      deps.logger.warn("monitor outbox relay failed; next pass retries", { err: err as Error }),
    );
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
