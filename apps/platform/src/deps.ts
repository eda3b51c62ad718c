import type postgres from "postgres";
import type { Db } from "@cellar/shared/db/client";
import type { KeyResolver } from "@cellar/shared/auth/keys";
import type { Logger } from "@cellar/shared/logger";
import type { WebhookOptions } from "./webhooks/options.ts";
import type { PlatformLimiter } from "./http/limits.ts";
import type { SignInService } from "./signin/service.ts";
import type { DeadLetterAccess } from "./dead-letters/service.ts";

/**
 * What the platform app is built from. Its own module so route modules can name it without
 * importing `app.ts`, which imports every route module (no import loop).
 */
export interface PlatformDeps {
  db: Db;
  sql: postgres.Sql;
  /**
   * Telemetry and analysis reads: a streaming replica (DATABASE_READ_URL), with read-your-writes
   * where an answer needs it (replica.ts). Default: `sql`.
   */
  readSql?: postgres.Sql;
  keys: KeyResolver;
  logger: Logger;
  windowSeconds: number;
  /** Webhook management: secret sealing, DNS, allowlist, and DELIVERIES for test sends. */
  webhooks?: WebhookOptions;
  /** Per-key request limits (default: `createPlatformLimiter()` with the documented rates). */
  limiter?: PlatformLimiter;
  /** Dashboard sign-in (Bearer tokens on /api/v1, /auth routes); built from db/sql when absent. */
  signIns?: SignInService;
  /** JetStream for the dead-letter view and replay (/dead-letters); without it those answer 503. */
  deadLetters?: DeadLetterAccess;
  /** The ingest host's public URL (INGEST_PUBLIC_URL): DSNs minted in the dashboard carry it; "" = legacy DSNs. */
  ingestPublicUrl?: string;
  /** Every request is answered within this (503 past it); default PLATFORM_REQUEST_DEADLINE_MS. */
  requestDeadlineMs?: number;
}
