import { JetStreamApiCodes, JetStreamApiError, type ConsumerMessages } from "@nats-io/jetstream";
import type { ConsumeRuntime, PullLoop } from "./runtime.ts";
import type { Accept } from "./types.ts";

/**
 * Pulls one durable consumer until the runtime stops (or, `untilGone`, until the consumer is
 * deleted): decodes each message with the stream's codec, dead-letters an invalid one at once,
 * and hands the rest to `accept`, which waits for room. A broken pull restarts after 500 ms.
 */
export function pullLoop<T>(
  rt: ConsumeRuntime<T>,
  durable: string,
  accept: Accept<T>,
  opts: { maxMessages: number; untilGone?: boolean },
): PullLoop {
  let messages: ConsumerMessages | undefined;
  let ended = false;
  const loop: PullLoop = {
    stop() {
      ended = true;
      messages?.stop();
    },
    done: (async () => {
      while (!rt.isStopping() && !ended) {
        try {
          const consumer = await rt.deps.js.consumers.get(rt.streamName, durable);
          messages = await consumer.consume({ max_messages: opts.maxMessages, expires: 5_000 });
          if (rt.isStopping() || ended) {
            messages.stop(); // stop() came while this pull was being set up
            break;
          }
          for await (const m of messages) {
            rt.held.set(m, Date.now());
            const decoded = rt.spec.codec.decode(m.subject, m.data, m.headers);
            if (!decoded.ok) {
              rt.track(rt.deadLetter(m, undefined, `invalid message: ${decoded.error}`));
              continue;
            }
            await accept({ value: decoded.value, msg: m });
          }
        } catch (err) {
          if (rt.isStopping() || ended) break;
          if (opts.untilGone && isNotFound(err)) break;
          rt.log.warn("consume loop interrupted; restarting", { consumer: durable, err: err as Error });
          await rt.sleep(500);
        }
      }
    })(),
  };
  rt.pulls.add(loop);
  void loop.done.finally(() => rt.pulls.delete(loop));
  return loop;
}

/** The consumer (or its stream) does not exist. */
export function isNotFound(err: unknown): boolean {
  return (
    err instanceof JetStreamApiError &&
    (err.code === JetStreamApiCodes.ConsumerNotFound || err.code === JetStreamApiCodes.StreamNotFound)
  );
}
