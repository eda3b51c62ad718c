import type { StreamSpec } from "./catalogue.ts";
import { batchRunner } from "./consume/batch.ts";
import { deadLetter, deadLetterPart } from "./consume/dead-letter.ts";
import { eachRunner } from "./consume/each.ts";
import { laneBatchRunner } from "./consume/lane-batch.ts";
import { pullLanes } from "./consume/lanes.ts";
import { createRuntime } from "./consume/runtime.ts";
import type { BatchMode, ConsumeDeps, ConsumeLoop, EachMode } from "./consume/types.ts";

export type {
  BatchMode,
  ConsumeDeps,
  ConsumeLoop,
  DeadLetterInfo,
  DeadPart,
  Delivery,
  EachMode,
  Outcome,
} from "./consume/types.ts";

/**
 * The one consume runtime: pulls a catalogue stream's durable consumer, decodes each message
 * with the stream's codec, runs the handler, and settles every message according to the
 * stream's policy (catalogue.ts, ConsumerSpec): invalid -> dead letter at once; a failing batch
 * is split until the culprit is alone, the rest committed; transient failures keep the messages
 * and back off; the rest retries with backoff until `maxDeliver`, then dead-letters.
 *
 * Its parts (consume/): runtime.ts (state, heartbeat, stop), pull.ts (one durable consumer's
 * pull), batch.ts, lane-batch.ts and each.ts (the modes, batch split and culprit isolation), settle.ts
 * (outcomes and failure policy), dead-letter.ts, lanes.ts (a pull per lane, the retired consumer).
 */
export function consume<T>(spec: StreamSpec<T>, deps: ConsumeDeps, mode: BatchMode<T>): ConsumeLoop;
export function consume<T>(spec: StreamSpec<T>, deps: ConsumeDeps, mode: EachMode<T>): ConsumeLoop;
export function consume<T>(spec: StreamSpec<T>, deps: ConsumeDeps, mode: BatchMode<T> | EachMode<T>): ConsumeLoop {
  if (!spec.consumer) throw new Error(`stream ${spec.key} has no consumer in the catalogue`);
  const rt = createRuntime(spec, deps, deadLetter, deadLetterPart);
  const runner =
    "batch" in mode ? (mode.batch.perLane ? laneBatchRunner(rt, mode) : batchRunner(rt, mode)) : eachRunner(rt, mode);
  const done = (async () => {
    await pullLanes(rt, runner, "each" in mode ? mode.retired : undefined);
    await runner.drain();
  })();
  return {
    async stop() {
      rt.stop();
      await done;
      await rt.close();
    },
  };
}
