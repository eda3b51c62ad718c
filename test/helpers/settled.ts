import { ingestStream } from "@cellar/shared/nats/catalogue";
import { consumerBacklog } from "@cellar/shared/nats/consume/lanes";
import type { TestStack } from "./stack";

/**
 * How much of what was accepted has not settled yet: INGEST messages the processor has not
 * stored (ingest answers 200 once JetStream holds a message; its rows, and so its session, exist
 * only a moment later), plus sessions not matured, with a MATURED publish still owed, or with an
 * analysis behind the session's activity. Zero before a test writes rows of its own beside the
 * analysis (a later re-maturation would replace them) or compares answers that a re-maturation
 * would change. Counting sessions alone was zero before a just-accepted trace's session existed
 * (last session's CI failure in test/dashboard-release).
 */
export async function unsettledSessions(stack: TestStack): Promise<number> {
  const notStored = await consumerBacklog(stack.nats.jsm, ingestStream, stack.nats.topology);
  const [r] = await stack.database.sql<{ n: number }[]>`
    select count(*)::int as n from sessions s left join session_analyses sa on sa.session_pk = s.id
    where s.status <> 'matured' or s.published_count < s.maturation_count
      or sa.through_activity_seq is distinct from s.activity_seq`;
  return notStored + r.n;
}
