import { headers as natsHeaders, type MsgHdrs } from "@nats-io/transport-node";
import { LRUCache } from "lru-cache";
import type { JetStreamClient } from "@nats-io/jetstream";
import { transcriptHash, type EvalContext } from "@cellar/shared/evaluations/context";
import { inSample, matchesFilter } from "@cellar/shared/evaluations/filter";
import { loadSessionContext, loadSessionFacts, loadTraceContext } from "@cellar/shared/evaluations/load";
import {
  activeEvaluators,
  claimJudgement,
  evaluationExists,
  pauseEvaluator,
  recordEvaluation,
  releaseJudgement,
  spentToday,
  type EvaluationKey,
  type EvaluatorRow,
} from "@cellar/shared/evaluations/store";
import type { Logger } from "@cellar/shared/logger";
import { evaluationsConsumer, maturedStream } from "@cellar/shared/nats/catalogue";
import { consume, type ConsumeDeps, type ConsumeLoop, type Delivery, type Outcome } from "@cellar/shared/nats/consume";
import { publish } from "@cellar/shared/nats/publish";
import type { Topology } from "@cellar/shared/nats/topology";
import { maturationKey, maturationsOf, type MaturedMessage, type MaturedStreamMessage } from "@cellar/shared/payloads";
import { ANSWER_ATTEMPTS, evaluateOne, verdictOrFailure, type EvaluateDeps } from "./evaluate.ts";
import { whileTransient } from "./persist.ts";
import { createTenantPool, type TenantPool } from "./pool.ts";

/** The header of a MATURED message the runner re-announces after storing a score (monitors re-sample). */
export const EVALUATED_HEADER = "Cellar-Evaluated";
/** Deliveries of one MATURED message a judge's transient failures may take; the last one records the failure. */
export const MAX_JUDGE_DELIVERIES = 6;
/** Delays before the 2nd, 3rd, ... delivery after a transient judge failure (the last repeats). */
export const JUDGE_RETRY_MS = [2_000, 10_000, 30_000, 60_000, 120_000] as const;
/** A service's evaluators are cached this long: an edit applies from the next maturation after it expires. */
export const EVALUATORS_CACHE_MS = 5_000;
/**
 * Maturations judged at once in this process (each calls its judges one after the other): the
 * most judge calls in flight. 64 = what the runner's 64 messages in hand allowed when a message's
 * maturations ran one after the other.
 */
export const DEFAULT_JUDGE_CONCURRENCY = 64;
/** The share of those one tenant may hold (like each lane's quarter of the messages in hand). */
export const TENANT_JUDGE_SHARE = 0.25;
/** A judgement's claim lasts its judge calls' deadlines (ANSWER_ATTEMPTS of them) plus this, for the record. */
export const JUDGE_CLAIM_MARGIN_MS = 30_000;

export interface EvaluationRunnerOptions {
  /** Multiplies every retry delay (tests). */
  retryScale?: number;
  /** MATURED messages in hand at once (all lanes; each lane at most a quarter). */
  concurrency?: number;
  cacheMs?: number;
  /** Maturations judged at once, all tenants (DEFAULT_JUDGE_CONCURRENCY). */
  judgeConcurrency?: number;
  /** Maturations judged at once for one tenant (default TENANT_JUDGE_SHARE of judgeConcurrency). */
  tenantJudgeConcurrency?: number;
  /** How often the run worker looks for a pending run on past sessions (default 1 s). */
  runPollMs?: number;
  /** How long a judgement's claim lasts (default: the judge calls' deadlines plus JUDGE_CLAIM_MARGIN_MS; tests shorten it). */
  claimMs?: number;
  /** Test hook: runs after a judgement is recorded, before the message is acked. */
  afterRecord?: (info: { evaluatorId: string; entityId: string; status: string }) => Promise<void> | void;
}

export interface EvaluationRunnerDeps extends EvaluateDeps {
  js: JetStreamClient;
  topology: Topology;
  logger: Logger;
  now: () => Date;
  options?: EvaluationRunnerOptions;
}

/**
 * Online evaluation (docs/evaluations.md): the `dispatcher-evaluations` lanes of MATURED. Each
 * matured session or trace of a service with evaluators is loaded once, hashed, and judged by
 * every active evaluator whose sample, filter and budget take it and whose version has not judged
 * that transcript yet; the verdict is recorded once (shared/evaluations/store.ts) as a score.
 */
export function startEvaluationRunner(deps: EvaluationRunnerDeps, runtime: ConsumeDeps): ConsumeLoop {
  const o = deps.options ?? {};
  const runner = createRunnerState(deps);
  return consume(evaluationsConsumer, runtime, {
    each: { maxInFlight: o.concurrency ?? 64 },
    handle: (d) => handleEvaluations(deps, runner, d),
  });
}

/** What the runner keeps across messages: the evaluators cache, the judging pool, the maturations in hand. */
export interface RunnerState {
  evaluatorsOf: (serviceId: string) => Promise<EvaluatorRow[]>;
  pool: TenantPool;
  /**
   * Maturation key -> its evaluation running in this process. A maturation reaches MATURED again
   * in another batch (a republish groups differently, docs/maturation.md "One effect per
   * maturation"); a copy arriving while the first is judged shares its run instead of calling the
   * judge again (the record is once by its key anyway; the judge's bill would not be).
   */
  running: Map<string, Promise<number>>;
}

export function createRunnerState(deps: EvaluationRunnerDeps): RunnerState {
  const o = deps.options ?? {};
  const cache = new LRUCache<string, EvaluatorRow[]>({ max: 10_000, ttl: o.cacheMs ?? EVALUATORS_CACHE_MS });
  const concurrency = o.judgeConcurrency ?? DEFAULT_JUDGE_CONCURRENCY;
  return {
    async evaluatorsOf(serviceId) {
      const hit = cache.get(serviceId);
      if (hit) return hit;
      const rows = await activeEvaluators(deps.sql, serviceId);
      cache.set(serviceId, rows);
      return rows;
    },
    running: new Map(),
    pool: createTenantPool({
      concurrency,
      tenantConcurrency: Math.min(
        concurrency,
        o.tenantJudgeConcurrency ?? Math.max(1, Math.floor(concurrency * TENANT_JUDGE_SHARE)),
      ),
    }),
  };
}

/**
 * One MATURED message: its maturations judged side by side in the runner's pool (a batch of 100
 * sessions is not 100 judge calls one after the other). Every maturation runs to its end
 * whatever another's fate: a transient failure asks for the longest delay any asked for, and an
 * exception is rethrown only once the others are recorded (a redelivery skips what is recorded).
 */
export async function handleEvaluations(
  deps: EvaluationRunnerDeps,
  runner: RunnerState,
  { value, msg }: Delivery<MaturedStreamMessage | null>,
): Promise<Outcome> {
  if (value === null || msg.headers?.get(EVALUATED_HEADER)) return "ack";
  const settled = await Promise.allSettled(
    (await withEvaluators(runner, maturationsOf(value))).map((m) =>
      once(runner.running, maturationKey(m), () =>
        runner.pool.run(m.tenantId, () => evaluateMaturation(deps, runner.evaluatorsOf, m, msg.info.deliveryCount)),
      ),
    ),
  );
  const failed = settled.find((s): s is PromiseRejectedResult => s.status === "rejected");
  if (failed) throw failed.reason;
  const retryInMs = Math.max(0, ...settled.map((s) => (s.status === "fulfilled" ? s.value : 0)));
  return retryInMs > 0 ? { retryInMs } : "ack";
}

/**
 * The maturations of services that have an evaluator (the runner's cached lookup, once per
 * service): most services have none, and their maturations need no slot in the pool, no shared
 * run and no key (evaluateMaturation would find no candidate and return 0 for them).
 */
async function withEvaluators(runner: RunnerState, maturations: MaturedMessage[]): Promise<MaturedMessage[]> {
  const services = [...new Set(maturations.map((m) => m.traceServiceId))];
  const judged = new Set<string>();
  await Promise.all(
    services.map(async (s) => {
      if ((await runner.evaluatorsOf(s)).length > 0) judged.add(s);
    }),
  );
  return judged.size === services.length ? maturations : maturations.filter((m) => judged.has(m.traceServiceId));
}

/** `work` for `key`, or the run of it already in hand (its result and its failure shared). */
function once<T>(running: Map<string, Promise<T>>, key: string, work: () => Promise<T>): Promise<T> {
  const inHand = running.get(key);
  if (inHand) return inHand;
  const run = work().finally(() => running.delete(key));
  running.set(key, run);
  return run;
}

/** Evaluates one maturation; the delay its transient failures ask for (0: nothing to retry). */
async function evaluateMaturation(
  deps: EvaluationRunnerDeps,
  evaluatorsOf: (serviceId: string) => Promise<EvaluatorRow[]>,
  m: MaturedMessage,
  deliveryCount: number,
): Promise<number> {
  const target = m.type === "session.matured" ? "session" : "trace";
  const entityId = (target === "session" ? m.sessionId : m.traceId) ?? m.entityPk;
  // The cost of an evaluator that matches nothing: this cached lookup and a hash.
  const candidates = (await evaluatorsOf(m.traceServiceId)).filter(
    (e) => e.target === target && inSample(e.definition.sampling_rate, e.id, entityId),
  );
  if (candidates.length === 0) return 0;
  // Filters are checked on the session's facts first (one small query): an evaluator whose filter
  // takes nothing never loads a transcript.
  const filtered = candidates.filter((e) => Object.keys(e.definition.filter).length > 0);
  if (target === "session" && filtered.length === candidates.length) {
    const facts = await loadSessionFacts(deps.sql, m.tenantId, m.entityPk);
    if (!facts || !candidates.some((e) => matchesFilter(e.definition.filter, facts))) return 0;
  }
  const ctx =
    target === "session"
      ? await loadSessionContext(deps.sql, m.tenantId, m.entityPk)
      : await loadTraceContext(deps.sql, m.tenantId, m.entityPk);
  if (!ctx || ctx.items.length === 0) return 0; // deleted since, or nothing to judge
  const hash = transcriptHash(ctx.items);
  let retryInMs = 0;
  const scored: string[] = [];
  for (const e of candidates) {
    if (!matchesFilter(e.definition.filter, ctx)) continue;
    const key: EvaluationKey = {
      tenantId: m.tenantId,
      traceServiceId: m.traceServiceId,
      evaluatorId: e.id,
      evaluatorVersion: e.version,
      target,
      entityId: ctx.entityId,
      transcriptHash: hash,
    };
    if (await evaluationExists(deps.sql, key)) continue;
    const wait = await runEvaluator(deps, e, ctx, key, m, deliveryCount);
    if (typeof wait === "number") retryInMs = Math.max(retryInMs, wait);
    else if (wait !== "done") scored.push(wait.scored);
  }
  // Monitors sample a session when it matures, before its judgement exists: the maturation is
  // announced again (a new message id, marked so this runner skips it) and the monitors consumer
  // re-samples the session with its score; the webhook fan-out finds its deliveries made.
  // Recorded already: NATS away must not turn this into a re-run that finds it judged and never announces it.
  if (scored.length && target === "session") await whileTransient(() => reannounce(deps, m, scored));
  return retryInMs;
}

/** The recorded score's evaluation, "done" (recorded failed, paused, skipped), or the delay before trying again. */
async function runEvaluator(
  deps: EvaluationRunnerDeps,
  e: EvaluatorRow,
  ctx: EvalContext,
  key: EvaluationKey,
  m: MaturedMessage,
  deliveryCount: number,
): Promise<{ scored: string } | "done" | number> {
  const budget = e.definition.daily_budget_usd;
  if (budget !== null && e.definition.judge) {
    const [row] = await deps.sql`
      select to_char(budget_day, 'YYYY-MM-DD') as budget_day, budget_spent_usd, status from evaluators
      where id = ${e.id} and tenant_id = ${e.tenant_id}`;
    if (!row || row.status !== "active") return "done";
    if (spentToday(row as EvaluatorRow, deps.now()) >= budget) {
      deps.logger.info("evaluator over its daily budget: not judged", { evaluatorId: e.id, entityId: ctx.entityId });
      return "done";
    }
  }
  // One judge call per judgement across processes (the in-process copies share a run: `once`).
  const claim = e.definition.judge ? await claimJudge(deps, e, key) : null;
  if (claim === "judged") return "done";
  if (typeof claim === "number") return claim;
  const started = performance.now();
  const out = await evaluateOne(deps, e, ctx).catch(async (err) => {
    if (claim) await releaseJudgement(deps.sql, key, claim.until).catch(() => {});
    throw err;
  });
  if (out.kind === "auth") {
    // Paused with the reason the API shows; this transcript's evaluation is recorded failed, so a
    // redelivery (another evaluator's retry) does not call the judge with the refused key again.
    await pauseEvaluator(deps.sql, e, out.error, deps.now());
    deps.logger.warn("evaluator paused: the judge refused its key", { evaluatorId: e.id, error: out.error });
  }
  if (out.kind === "retry" && deliveryCount < MAX_JUDGE_DELIVERIES) {
    const scale = deps.options?.retryScale ?? 1;
    const curve = JUDGE_RETRY_MS[Math.min(deliveryCount, JUDGE_RETRY_MS.length) - 1] * scale;
    deps.logger.info("judge call failed; retrying", { evaluatorId: e.id, entityId: ctx.entityId, error: out.error });
    if (claim) await whileTransient(() => releaseJudgement(deps.sql, key, claim.until));
    return Math.max(1, Math.round(Math.max(curve, out.retryAfterMs ?? 0)));
  }
  const verdict = verdictOrFailure(
    out,
    out.kind === "auth"
      ? `${out.error}; the evaluator is paused`
      : `${out.kind === "retry" ? out.error : ""} (gave up after ${deliveryCount} attempts)`,
  );
  // The verdict is in hand: Postgres away now waits for it to come back instead of calling the judge again.
  const recorded = await whileTransient(
    () =>
      recordEvaluation(
        deps.sql,
        key,
        {
          status: verdict.status,
          value: verdict.value,
          reason: verdict.reason,
          error: verdict.error,
          injectionFlagged: ctx.findings.some((f) => f.inToolResult),
          attempts: deliveryCount,
          inputTokens: verdict.inputTokens,
          outputTokens: verdict.outputTokens,
          costUsd: verdict.costUsd,
          durationMs: Math.round(performance.now() - started),
          maturationCount: m.maturationCount,
          mode: "live",
          scoreName: e.name,
          environment: ctx.environment,
        },
        deps.now(),
      ),
    {
      onRetry: (err, attempt) =>
        attempt === 0 &&
        deps.logger.warn("judgement not recorded yet; keeping it and retrying", {
          evaluatorId: e.id,
          entityId: ctx.entityId,
          err: err as Error,
        }),
    },
  );
  if (recorded)
    await deps.options?.afterRecord?.({ evaluatorId: e.id, entityId: ctx.entityId, status: verdict.status });
  return recorded?.scoreId ? { scored: recorded.evaluationId } : "done";
}

/**
 * The judgement's claim (claimJudgement): its end when this caller holds it, "judged" when it is
 * recorded already, or how long to wait for another caller's claim to end (the message comes
 * back then and finds it judged, or free).
 */
async function claimJudge(
  deps: EvaluationRunnerDeps,
  e: EvaluatorRow,
  key: EvaluationKey,
): Promise<{ until: Date } | "judged" | number> {
  const perCall = e.definition.judge?.timeout_seconds
    ? e.definition.judge.timeout_seconds * 1000
    : deps.judge.timeoutMs;
  const now = deps.now();
  const until = new Date(now.getTime() + (deps.options?.claimMs ?? perCall * ANSWER_ATTEMPTS + JUDGE_CLAIM_MARGIN_MS));
  const claim = await claimJudgement(deps.sql, key, until, now);
  if (claim.kind === "claimed") return { until };
  if (claim.kind === "judged") return "judged";
  deps.logger.info("judgement claimed by another process; back when its claim ends", {
    evaluatorId: e.id,
    entityId: key.entityId,
  });
  return Math.max(1, claim.until.getTime() - now.getTime());
}

async function reannounce(deps: EvaluationRunnerDeps, m: MaturedMessage, evaluationIds: string[]): Promise<void> {
  const headers: MsgHdrs = natsHeaders();
  headers.set(EVALUATED_HEADER, "1");
  const msgID = `${maturationKey(m)}:evaluated:${evaluationIds.join(",")}`;
  await publish(deps.js, deps.topology, maturedStream, m, { msgID, headers });
}
