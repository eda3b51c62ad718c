-- Issue 36 part 2: a session's transcript items as one row per trace ("runs"), where
-- transcript_items holds one row per item (about 4 per trace, each with two b-tree entries; its
-- insert was the costliest statement of maturation). A run is consecutive items of one trace (cut
-- before 4 KB of JSON: the row stays under 8 KB as jsonb): `items` holds each item's row as transcript_items stored it,
-- with its position; `item_ids` the ids for the item read by id; `digest` hashes the run, so a
-- re-maturation rewrites only runs that changed (null: rewritten, as retention leaves a run it cut).
-- Online: rows of transcript_items written before stay and are read as they were; a session's
-- next maturation replaces them with runs in its transaction (docs/analysis.md, "Transcript runs").
-- One item id per session is the writer's rule here (persist.ts); no index can hold it over arrays.
-- Rows up to 8 KB stay inline and uncompressed: toast_tuple_target, not the default 2 KB.
CREATE TABLE "transcript_runs" (
  "session_pk" uuid NOT NULL,
  "position" integer NOT NULL,
  "tenant_id" uuid NOT NULL,
  "last_position" integer NOT NULL,
  "item_ids" text[] NOT NULL,
  "items" jsonb NOT NULL,
  "digest" bigint,
  CONSTRAINT "transcript_runs_pkey" PRIMARY KEY ("session_pk", "position", "tenant_id"),
  CONSTRAINT "transcript_runs_session_pk_sessions_id_fk" FOREIGN KEY ("session_pk", "tenant_id") REFERENCES "sessions" ("id", "tenant_id") ON DELETE CASCADE
) WITH (toast_tuple_target = 8160);
