import { createLogger } from "@cellar/shared/logger";
import { toCidrs } from "@cellar/shared/webhooks/address";
import type { EvaluationRunnerDeps, EvaluationRunnerOptions } from "../../apps/dispatcher/src/evaluations/runner";
import type { TestStack } from "./stack";

/**
 * The evaluation runner's deps on a test stack, as a dispatcher process builds them, with the
 * judge reached over loopback (a fake judge or msw on 127.0.0.1, allowed by the allowlist) and
 * no DNS: tests that call the runner's handler directly, as two processes would.
 */
export function evaluationRunnerDeps(stack: TestStack, options: EvaluationRunnerOptions): EvaluationRunnerDeps {
  return {
    sql: stack.database.sql,
    js: stack.nats.js,
    topology: stack.nats.topology,
    logger: createLogger("silent"),
    secretBox: stack.secretBox,
    now: () => new Date(),
    judge: {
      fetch: (url, init) => fetch(url, init),
      resolveDns: async () => [],
      allowlist: toCidrs("127.0.0.0/8"),
      now: () => new Date(),
      timeoutMs: 30_000,
    },
    options,
  };
}
