import { and, asc, eq } from "drizzle-orm";
import type { Db } from "../db/client.ts";
import { intentDefinitions, traceServices } from "../db/schema/index.ts";
import { AdminError } from "../errors.ts";
import { createService } from "./tenancy.ts";

/**
 * Intent definitions per trace service (what users come to do). The processor matches them
 * against user messages at each maturation (docs/analysis.md, "Intents"); a change applies to
 * sessions that mature after it.
 */
export interface IntentInput {
  tenantId: string;
  /** Trace service name; created in the default project if it has not ingested yet. */
  service: string;
  name: string;
  description?: string;
  examples?: string[];
}

const LIMITS = { name: 200, description: 2_000, example: 500, examples: 100 };

export async function defineIntent(db: Db, input: IntentInput) {
  const name = input.name?.trim();
  if (!name) throw new AdminError("--name must not be empty");
  if (name.length > LIMITS.name) throw new AdminError(`--name must be at most ${LIMITS.name} characters`);
  const description = (input.description ?? "").trim();
  if (description.length > LIMITS.description)
    throw new AdminError(`--description must be at most ${LIMITS.description} characters`);
  const examples = (input.examples ?? []).map((e) => e.trim()).filter(Boolean);
  if (examples.length > LIMITS.examples)
    throw new AdminError(`--example may be given at most ${LIMITS.examples} times`);
  if (examples.some((e) => e.length > LIMITS.example))
    throw new AdminError(`--example must be at most ${LIMITS.example} characters each`);
  if (!examples.length && !description)
    throw new AdminError("give --example phrases (or at least --description) to match the intent against");
  const serviceId = await serviceIdFor(db, input.tenantId, input.service, true);
  const [row] = await db
    .insert(intentDefinitions)
    .values({ tenantId: input.tenantId, traceServiceId: serviceId, name, description, examples })
    .onConflictDoUpdate({
      target: [intentDefinitions.traceServiceId, intentDefinitions.name, intentDefinitions.tenantId],
      set: { description, examples },
    })
    .returning({
      id: intentDefinitions.id,
      name: intentDefinitions.name,
      description: intentDefinitions.description,
      examples: intentDefinitions.examples,
    });
  return row;
}

export async function listIntents(db: Db, input: { tenantId: string; service: string }) {
  const serviceId = await serviceIdFor(db, input.tenantId, input.service, false);
  return db
    .select({
      id: intentDefinitions.id,
      name: intentDefinitions.name,
      description: intentDefinitions.description,
      examples: intentDefinitions.examples,
    })
    .from(intentDefinitions)
    .where(and(eq(intentDefinitions.tenantId, input.tenantId), eq(intentDefinitions.traceServiceId, serviceId)))
    .orderBy(asc(intentDefinitions.name));
}

export async function deleteIntent(db: Db, input: { tenantId: string; service: string; name: string }) {
  const serviceId = await serviceIdFor(db, input.tenantId, input.service, false);
  const rows = await db
    .delete(intentDefinitions)
    .where(
      and(
        eq(intentDefinitions.tenantId, input.tenantId),
        eq(intentDefinitions.traceServiceId, serviceId),
        eq(intentDefinitions.name, input.name),
      ),
    )
    .returning({ id: intentDefinitions.id });
  if (!rows.length)
    throw new AdminError(`no intent ${JSON.stringify(input.name)} on service ${JSON.stringify(input.service)}`);
  return rows[0];
}

export async function serviceIdFor(db: Db, tenantId: string, service: string, create: boolean): Promise<string> {
  if (!service?.trim()) throw new AdminError("--service must not be empty");
  const find = async () =>
    (
      await db
        .select({ id: traceServices.id })
        .from(traceServices)
        .where(and(eq(traceServices.tenantId, tenantId), eq(traceServices.name, service)))
    )[0];
  const found = await find();
  if (found) return found.id;
  if (!create) throw new AdminError(`no service ${JSON.stringify(service)} in tenant ${tenantId}`);
  try {
    return (await createService(db, { tenantId, name: service })).id;
  } catch (err) {
    const raced = await find(); // created concurrently by ingest
    if (raced) return raced.id;
    throw err;
  }
}
