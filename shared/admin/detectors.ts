import { and, desc, eq, sql } from "drizzle-orm";
import { sqlOf, type Db } from "../db/client.ts";
import { detectorSettings, sessions, traceServices } from "../db/schema/index.ts";
import {
  DETECTOR_NAMES,
  parseDetectorSetting,
  resolveDetectorConfig,
  type DetectorName,
} from "../analysis/detector-config.ts";
import { PARKED_SQL, unpark } from "../maturation/state.ts";
import { serviceIdFor } from "./intents.ts";
import { AdminError } from "../errors.ts";

/**
 * Detector thresholds per trace service (docs/analysis.md, "Configuration"): overrides stored
 * over the defaults, applied to sessions that mature after the change.
 */
async function storedOverrides(db: Db, serviceId: string): Promise<Record<string, Record<string, number | boolean>>> {
  const [row] = await db
    .select({ settings: detectorSettings.settings })
    .from(detectorSettings)
    .where(eq(detectorSettings.traceServiceId, serviceId));
  return row?.settings ?? {};
}

/** The effective config (defaults + overrides) and the overrides alone. */
export async function showDetectors(db: Db, input: { tenantId: string; service: string }) {
  const serviceId = await serviceIdFor(db, input.tenantId, input.service, false);
  const overrides = await storedOverrides(db, serviceId);
  return { service: input.service, overrides, effective: resolveDetectorConfig(overrides) };
}

/** `settings`: `detector.key=value` strings (each validated against the defaults). */
export async function setDetectors(db: Db, input: { tenantId: string; service: string; settings: string[] }) {
  if (!input.settings.length) throw new AdminError("give at least one --set detector.key=value");
  const parsed = input.settings.map((s) => {
    try {
      return parseDetectorSetting(s);
    } catch (err) {
      throw new AdminError((err as Error).message);
    }
  });
  const serviceId = await serviceIdFor(db, input.tenantId, input.service, true);
  const overrides = await storedOverrides(db, serviceId);
  for (const p of parsed) overrides[p.detector] = { ...(overrides[p.detector] ?? {}), [p.key]: p.value };
  await db
    .insert(detectorSettings)
    .values({ traceServiceId: serviceId, tenantId: input.tenantId, settings: overrides })
    .onConflictDoUpdate({
      target: [detectorSettings.traceServiceId, detectorSettings.tenantId],
      set: { settings: overrides, updatedAt: new Date() },
    });
  return { service: input.service, overrides, effective: resolveDetectorConfig(overrides) };
}

/** Drops the overrides of one detector, or all of them (back to the defaults). */
export async function resetDetectors(db: Db, input: { tenantId: string; service: string; detector?: string }) {
  if (input.detector !== undefined && !DETECTOR_NAMES.includes(input.detector as DetectorName)) {
    throw new AdminError(`unknown detector "${input.detector}"; known: ${DETECTOR_NAMES.join(", ")}`);
  }
  const serviceId = await serviceIdFor(db, input.tenantId, input.service, false);
  const overrides = await storedOverrides(db, serviceId);
  if (input.detector) delete overrides[input.detector];
  const next = input.detector ? overrides : {};
  await db
    .update(detectorSettings)
    .set({ settings: next, updatedAt: new Date() })
    .where(eq(detectorSettings.traceServiceId, serviceId));
  return { service: input.service, overrides: next, effective: resolveDetectorConfig(next) };
}

/**
 * Sessions whose maturation is failing: parked ones (attempts ran out) and ones backing off,
 * newest first, with the last error. What an operator looks at when a transcript never completes.
 */
export async function listMaturationFailures(db: Db, input: { tenantId?: string; limit?: number }) {
  const rows = await db
    .select({
      sessionPk: sessions.id,
      tenantId: sessions.tenantId,
      service: traceServices.name,
      sessionId: sessions.sessionId,
      failures: sessions.maturationFailures,
      error: sessions.maturationError,
      retryAt: sessions.maturationRetryAt,
      failedAt: sessions.maturationFailedAt,
      parked: sql<boolean>`${sql.raw(PARKED_SQL)}`,
    })
    .from(sessions)
    .innerJoin(traceServices, eq(traceServices.id, sessions.traceServiceId))
    .where(
      and(sql`${sessions.maturationFailures} > 0`, input.tenantId ? eq(sessions.tenantId, input.tenantId) : undefined),
    )
    .orderBy(desc(sessions.maturationFailedAt), desc(sessions.maturationRetryAt))
    .limit(input.limit ?? 100);
  return { failures: rows };
}

/** Un-parks a failed session: the next sweep (or marker) tries again from a fresh count. */
export async function retryMaturation(db: Db, input: { sessionPk: string }) {
  const row = await unpark(sqlOf(db), input.sessionPk);
  if (!row) throw new AdminError(`no failed maturation for session ${input.sessionPk}`);
  return { sessionPk: row.id, sessionId: row.session_id };
}
