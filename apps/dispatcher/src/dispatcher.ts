import { deliveriesStream, maturedStream } from "@cellar/shared/nats/catalogue";
import { consume, type ConsumeDeps, type ConsumeLoop } from "@cellar/shared/nats/consume";
import { createDeliveryPath } from "./attempt.ts";
import { handleDeliveryAttempt, moveRetiredJob } from "./delivery-attempts.ts";
import type { DispatcherDeps } from "./deps.ts";
import { batchedFanOut, handleMatured } from "./matured.ts";
import { createDispatchResources } from "./resources.ts";
import { startEvaluationRunner } from "./evaluations/runner.ts";
import { startRunWorker } from "./evaluations/runs.ts";
import { DEFAULT_JUDGE_TIMEOUT_MS } from "./evaluations/judge.ts";
import { pruneHistory, RETENTION_MS } from "./prune.ts";
import { pruneJudgementClaims } from "@cellar/shared/evaluations/store";

export { DEFAULT_TIMEOUT_MS, type DispatcherDeps } from "./deps.ts";
export { DEFAULT_CONCURRENCY, DEFAULT_ENDPOINT_CONCURRENCY } from "./fairness.ts";

/**
 * MATURED -> delivery rows -> first attempt -> DELIVERIES for the retry curve; plus pruning
 * (webhook history, judgement claims).
 * Both consumers, MATURED's (matured.ts: fan-out, then first attempts, and the rule of which
 * message owns which delivery) and DELIVERIES' (retries, the retired consumer's jobs), enter one
 * delivery path (attempt.ts: prepare, send, record).
 */
export function createDispatcher(deps: DispatcherDeps) {
  // The infrastructure once (resources.ts); everything below reads it from here.
  const resources = createDispatchResources(deps);
  const path = createDeliveryPath(resources, deps);
  const fanOutOne = batchedFanOut(resources);
  const loops: ConsumeLoop[] = [];
  let pruneTimer: ReturnType<typeof setInterval> | undefined;
  let pruning: Promise<unknown> = Promise.resolve();

  const prune = () => {
    pruning = pruneHistory(resources.sql, resources.now(), deps.retentionMs ?? RETENTION_MS)
      .then((n) => n && resources.logger.info("pruned webhook history", { deliveries: n }))
      // Judgement claims a day old: the evaluation row answers for a judged one from then on.
      .then(() => pruneJudgementClaims(resources.sql, resources.now()))
      .catch((err) => resources.logger.error("pruning failed", { err: err as Error }));
    return pruning;
  };

  return {
    async start() {
      const { sql, js, topology, logger, secretBox, now } = resources;
      const runtime: ConsumeDeps = { js, topology, logger, ...deps.consume };
      // Unlike a batch at a time, a slow message never holds up the next ones; I/O is batched
      // across messages where it pays (createBatcher).
      // Tenant lanes (catalogue.ts): each lane holds at most a quarter of the in-flight budget and
      // a freed slot goes to the lane that waited longest, so one tenant's backlog in MATURED or
      // DELIVERIES delays only the tenants hashed to its lane.
      loops.push(
        consume(maturedStream, runtime, {
          each: { maxInFlight: 1000 },
          handle: (d) => handleMatured(path, fanOutOne, d),
        }),
      );
      loops.push(
        consume(deliveriesStream, runtime, {
          each: { maxInFlight: path.concurrency },
          handle: (d) => handleDeliveryAttempt(path, d),
          retired: (d) => moveRetiredJob(path, d),
        }),
      );
      const evaluation = {
        sql,
        js,
        topology,
        logger,
        secretBox,
        now,
        // The webhook rules for the judge's HTTP: the same pinned fetch, DNS and allow-list.
        judge: { ...resources.attempt, timeoutMs: deps.evaluations?.timeoutMs ?? DEFAULT_JUDGE_TIMEOUT_MS },
        options: deps.evaluations,
      };
      loops.push(startEvaluationRunner(evaluation, runtime));
      loops.push(startRunWorker(evaluation, { pollMs: deps.evaluations?.runPollMs }));
      void prune();
      pruneTimer = setInterval(prune, deps.pruneIntervalMs ?? 3600_000);
    },
    /** Stops pulling, lets in-flight attempts finish (bounded by the receiver timeout). */
    async stop() {
      if (pruneTimer) clearInterval(pruneTimer);
      await Promise.all(loops.map((l) => l.stop()));
      await pruning;
    },
    /** Runs one pruning pass now (tests, admin). */
    prune,
  };
}

export type Dispatcher = ReturnType<typeof createDispatcher>;
