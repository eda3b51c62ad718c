-- Organization settings in the dashboard (issue 25, docs/dashboard.md).
-- A telemetry key's or DSN's name (set at creation, editable) and when it was last used
-- (written by the key resolver at most once a minute per key, off the request path).
ALTER TABLE "api_keys" ADD COLUMN "name" text;--> statement-breakpoint
ALTER TABLE "api_keys" ADD COLUMN "last_used_at" timestamp with time zone;--> statement-breakpoint
-- First run: the one-time setup token the platform prints at start while no organization exists.
-- Only its SHA-256 is kept; `used_at` is set in the same transaction that creates the first
-- organization, so a second setup is refused.
CREATE TABLE "setup_tokens" (
  "id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
  "token_hash" text NOT NULL,
  "created_at" timestamp with time zone DEFAULT now() NOT NULL,
  "used_at" timestamp with time zone
);--> statement-breakpoint
CREATE UNIQUE INDEX "setup_tokens_hash_uq" ON "setup_tokens" ("token_hash");
