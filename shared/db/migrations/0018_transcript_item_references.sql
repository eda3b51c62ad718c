-- Transcript items as references into the stored payloads (issue 28, docs/analysis.md "Items as
-- references"). A new row's `item` keeps only what maturation computed (links, flags, the tool
-- name, latency, span attributes); the fields that are columns already (id, type, role,
-- timestamp, trace and span ids) are not repeated in it, and its content (with a response's
-- model, usage, finish reason, reasoning and refusal) is read from the payload of trace
-- `source_trace_pk` at `source` (`req:<j>` | `res:<i>`, optionally `:call:<k>`). `digest` hashes
-- everything the row stores but its position: a re-maturation writes only rows that changed.
-- Rows written before keep their full `item` (null source and digest) and answer as they did;
-- the session's next maturation rewrites them in the new shape. Nullable columns with no
-- default: no table rewrite, no lock beyond the brief ALTER.
ALTER TABLE "transcript_items" ADD COLUMN "source_trace_pk" uuid;--> statement-breakpoint
ALTER TABLE "transcript_items" ADD COLUMN "source" text;--> statement-breakpoint
ALTER TABLE "transcript_items" ADD COLUMN "digest" bigint;
