import type { ConsumerInfo, JetStreamManager } from "@nats-io/jetstream";
import type { Topology } from "../names.ts";
import { consumersOf, type StreamSpec } from "../catalogue.ts";
import { isNotFound, pullLoop } from "./pull.ts";
import type { ConsumeRuntime, PullLoop } from "./runtime.ts";
import type { Accept, Delivery, Outcome, Runner } from "./types.ts";

/** The retired consumer's state is read this often while it drains. */
const RETIRED_CHECK_MS = 30_000;
/** It is deleted only once nothing arrived on its subjects for this long (an older publisher still running). */
const RETIRED_QUIET_MS = 10 * 60_000;

/**
 * Pulls every durable consumer of the stream (one per lane on a laned stream, catalogue.ts) and
 * drains the consumer lanes replaced (with `retiredHandle`, default the mode's handler); resolves
 * once every pull has ended.
 */
export async function pullLanes<T>(
  rt: ConsumeRuntime<T>,
  runner: Runner<T>,
  retiredHandle?: (item: Delivery<T>) => Promise<Outcome>,
): Promise<void> {
  const laneLoops = consumersOf(rt.spec as StreamSpec<unknown>, rt.deps.topology).map((c) =>
    pullLoop(rt, c.durable, runner.acceptFor(c.lane ?? "*"), { maxMessages: runner.maxMessages }),
  );
  const retired = rt.spec.consumer?.lanes?.retired;
  const retiredDrain = retired
    ? drainRetired(rt, retired.durable, runner.acceptFor("retired", retiredHandle), runner.maxMessages)
    : Promise.resolve();
  await Promise.all([...laneLoops.map((l) => l.done), retiredDrain]);
}

/**
 * The consumer a laned stream had before lanes (catalogue.ts, `retired`): pulled like a lane
 * while it holds messages, deleted once it has nothing pending or in hand and nothing arrived
 * on its subjects for the quiet period, so an older publisher still running during a rolling
 * upgrade is not cut off. Every instance may try; the first delete wins.
 */
export async function drainRetired<T>(
  rt: ConsumeRuntime<T>,
  durable: string,
  accept: Accept<T>,
  maxMessages: number,
): Promise<void> {
  const checkEvery = rt.deps.policy?.retired?.checkEveryMs ?? RETIRED_CHECK_MS;
  const quietMs = rt.deps.policy?.retired?.quietMs ?? RETIRED_QUIET_MS;
  const { log, streamName } = rt;
  let pull: PullLoop | undefined;
  try {
    const jsm = await rt.deps.js.jetstreamManager(false);
    for (let first = true; !rt.isStopping(); first = false) {
      if (!first) await rt.sleep(checkEvery);
      if (rt.isStopping()) break;
      let info: ConsumerInfo;
      try {
        info = await jsm.consumers.info(streamName, durable);
      } catch (err) {
        if (isNotFound(err)) break; // never existed (a fresh install) or already deleted
        log.warn("cannot read the retired consumer; retrying", { consumer: durable, err: err as Error });
        continue;
      }
      if (!pull) {
        log.info("draining the consumer lanes replaced", {
          consumer: durable,
          pending: info.num_pending,
          inHand: info.num_ack_pending,
        });
        pull = pullLoop(rt, durable, accept, { maxMessages, untilGone: true });
      }
      if (info.num_pending > 0 || info.num_ack_pending > 0 || Date.now() - lastActive(info) < quietMs) continue;
      try {
        await jsm.consumers.delete(streamName, durable);
        log.info("retired consumer drained and deleted", { consumer: durable });
        break;
      } catch (err) {
        if (isNotFound(err)) break;
        log.warn("cannot delete the drained retired consumer; retrying", { consumer: durable, err: err as Error });
      }
    }
  } catch (err) {
    log.error("retired consumer drain failed", { consumer: durable, err: err as Error });
  }
  pull?.stop();
  await pull?.done;
}

/** When the consumer last delivered or saw an ack (its creation time if never). */
export function lastActive(info: ConsumerInfo): number {
  const times = [info.delivered?.last_active, info.ack_floor?.last_active, info.created]
    .map((v) => (typeof v === "string" ? Date.parse(v) : NaN))
    .filter((n) => Number.isFinite(n));
  return times.length ? Math.max(...times) : 0;
}

/**
 * Messages every durable consumer of the stream (each lane, the unlaned one) has not yet
 * acknowledged: pending plus in hand. Tests, benches and operators wait on it.
 */
export async function consumerBacklog(jsm: JetStreamManager, spec: StreamSpec<any>, t: Topology): Promise<number> {
  let total = 0;
  for (const c of consumersOf(spec, t)) {
    const info = await jsm.consumers.info(spec.name(t), c.durable);
    total += info.num_pending + info.num_ack_pending;
  }
  return total;
}
