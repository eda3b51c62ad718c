-- Issue 28: a trace's payload size as JSON text, written once by the processor beside the deflated
-- payload. Maturation reads the histories of small sessions together, a page at a time; without
-- the size, a page had to assume every trace could inflate to the 4 MiB ingest cap and took at most
-- 16 traces, so a chunk of 50 sessions of 7 traces was 20-25 reads one after another (docs/
-- performance.md, "Maturation throughput"). Null on older rows: they still count at the cap.
-- Catalog only (a nullable column without a default): no table rewrite.
ALTER TABLE "traces" ADD COLUMN "payload_bytes" integer;
