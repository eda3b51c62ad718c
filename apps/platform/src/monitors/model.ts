import { t } from "elysia";

/**
 * The monitors' answers, documented as loose JSON objects: a definition is validated by
 * MonitorDefinition (shared/monitors/definition.ts) and answered as `monitorOut` in query/monitors.ts.
 */

export const Any = t.Record(t.String(), t.Unknown());
