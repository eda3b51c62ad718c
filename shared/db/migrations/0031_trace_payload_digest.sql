-- Issue 36 (analyse once): a long trace's session digest, written once with its payload by the
-- processor (apps/processor/src/analysis/digest.ts): the payload with the request's re-sent history
-- replaced by the chain hashes of its messages' fingerprints, deflated. Session maturation folds it
-- instead of inflating, parsing and fingerprinting the whole history again at every maturation;
-- written only for payloads of 16 KiB of JSON or more with history to prune, so short traces store
-- nothing more. Null on older rows and short traces: those are read from their payload as before
-- (docs/analyse-once.md). Catalog only (a nullable column without a default): no rewrite.
ALTER TABLE "trace_payloads" ADD COLUMN "digest_z" bytea;
