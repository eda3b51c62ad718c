import type { Consumer, ConsumerMessages, JsMsg } from "@nats-io/jetstream";
import type { Logger } from "@cellar/shared/logger";

export interface ConcurrentLoop {
  /** Stops pulling and waits for every message in hand to finish. */
  stop(): Promise<void>;
}

/**
 * Pulls from a durable consumer and runs `handle` on up to `maxInFlight` messages at once (each
 * message acks or naks itself). Unlike a batch-at-a-time loop, a slow message never holds up
 * the next ones; callers batch their own I/O where it pays (createBatcher).
 */
export function consumeConcurrently(consumer: Consumer, opts: { maxInFlight: number; logger: Logger; name: string; handle: (m: JsMsg) => Promise<void> }): ConcurrentLoop {
  const inFlight = new Set<Promise<void>>();
  let messages: ConsumerMessages | undefined;
  let stopped = false;
  let wake: (() => void) | undefined;

  const done = (async () => {
    while (!stopped) {
      try {
        messages = await consumer.consume({ max_messages: opts.maxInFlight, expires: 5_000 });
        for await (const m of messages) {
          while (inFlight.size >= opts.maxInFlight) await new Promise<void>((r) => (wake = r));
          const p: Promise<void> = opts
            .handle(m)
            .catch((err) => {
              opts.logger.error(`${opts.name}: handler threw; redelivering`, { seq: m.seq, err: err as Error });
              m.nak(5000);
            })
            .finally(() => {
              inFlight.delete(p);
              wake?.();
              wake = undefined;
            });
          inFlight.add(p);
        }
      } catch (err) {
        if (stopped) break;
        opts.logger.warn(`${opts.name}: consume loop interrupted; restarting`, { err: err as Error });
        await new Promise((r) => setTimeout(r, 500));
      }
    }
  })();

  return {
    async stop() {
      stopped = true;
      messages?.stop();
      wake?.();
      await done;
      await Promise.allSettled([...inFlight]);
    },
  };
}
