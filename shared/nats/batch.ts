import type { Consumer, ConsumerMessages, JsMsg } from "@nats-io/jetstream";
import type { Logger } from "../logger";

export interface BatchLoop {
  /** Resolves when the loop has ended and the last batch finished. */
  done: Promise<void>;
  /** Stops pulling, lets the in-flight batch finish. */
  stop(): Promise<void>;
}

/**
 * Pulls from a durable consumer and hands messages to `handle` in batches of up to `maxBatch`,
 * flushing a partial batch after `maxWaitMs`. Up to `concurrency` batches run at once (default
 * 1: one at a time, in order); `handle` acks or naks each message itself. A throwing `handle`
 * naks the whole batch for redelivery.
 */
export function consumeInBatches(
  consumer: Consumer,
  opts: { maxBatch: number; maxWaitMs: number; logger: Logger; handle: (batch: JsMsg[]) => Promise<void>; nakDelayMs?: number; concurrency?: number },
): BatchLoop {
  let messages: ConsumerMessages | undefined;
  let stopped = false;
  let buffer: JsMsg[] = [];
  let timer: ReturnType<typeof setTimeout> | undefined;
  const concurrency = Math.max(1, opts.concurrency ?? 1);
  const running = new Set<Promise<void>>();
  // Batches start in order: a timer flush and a full-buffer flush never overtake each other.
  let starting: Promise<void> = Promise.resolve();

  const run = async (batch: JsMsg[]) => {
    try {
      await opts.handle(batch);
    } catch (err) {
      opts.logger.error("batch failed; naking for redelivery", { err: err as Error, size: batch.length });
      for (const m of batch) m.nak(opts.nakDelayMs ?? 1000);
    }
  };

  /** Starts the buffered batch once a slot is free; resolves when it has started. */
  const flush = (): Promise<void> => {
    if (timer) clearTimeout(timer);
    timer = undefined;
    if (buffer.length === 0) return starting;
    const batch = buffer;
    buffer = [];
    starting = starting.then(async () => {
      while (running.size >= concurrency) await Promise.race(running);
      const p: Promise<void> = run(batch).finally(() => running.delete(p));
      running.add(p);
    });
    return starting;
  };
  const settled = async () => {
    await flush();
    await Promise.all(running);
  };

  const done = (async () => {
    while (!stopped) {
      try {
        messages = await consumer.consume({ max_messages: Math.max(opts.maxBatch * 2, 100), expires: 5_000 });
        for await (const m of messages) {
          buffer.push(m);
          if (buffer.length >= opts.maxBatch) await flush();
          else if (!timer) timer = setTimeout(flush, opts.maxWaitMs);
        }
      } catch (err) {
        if (stopped) break;
        opts.logger.warn("consume loop interrupted; restarting", { err: err as Error });
        await new Promise((r) => setTimeout(r, 500));
      }
    }
    await settled();
  })();

  return {
    done,
    async stop() {
      stopped = true;
      messages?.stop();
      await done;
    },
  };
}
