import { sql } from "drizzle-orm";

/**
 * The default id of rows written on every trace, event, maturation or delivery attempt
 * (migration 0027): a UUID version 7 (Postgres 18's `uuidv7()`), whose first 48 bits are the
 * time in milliseconds. New keys then land at the right edge of their primary key and of the
 * keys that lead with them (a trace's payload and analysis, a session's transcript items), where
 * random ones (`gen_random_uuid()`) touched a random leaf page per insert: past the buffer cache
 * once a table holds millions of rows, and pages split half full. What it reveals is the row's
 * creation time, which the row already carries (docs/performance.md, "Time-ordered ids").
 */
export const timeOrderedId = sql`uuidv7()`;
