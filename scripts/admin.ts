/**
 * `npm run admin -- <resource> <action> [--flags]`: the stand-in for the dashboard's settings
 * pages. Prints one JSON object on stdout; bad input exits non-zero with a message on stderr.
 * Uses DATABASE_URL, else the database of a running `npm run dev` (.data/dev.env).
 */
import { existsSync, readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { parseArgs } from "node:util";
import { createDatabase, runMigrations } from "@cellar/shared/db/client";
import { countBeforeDelete } from "@cellar/shared/ledger/dead-letters";
import * as admin from "@cellar/shared/admin/tenancy";
import { createApiKey, revokeApiKey, updateApiKey } from "@cellar/shared/auth/key-store";
import { AdminError } from "@cellar/shared/errors";
import { defineIntent, deleteIntent, listIntents } from "@cellar/shared/admin/intents";
import {
  listKeys,
  listMembers,
  listProjects,
  updateUserProjects,
  updateUserRole,
} from "@cellar/shared/admin/operators";
import { createInvitation, setPassword } from "@cellar/shared/admin/signin";
import * as analysisAdmin from "@cellar/shared/admin/detectors";
import { deletePrice, listPrices, setPrice } from "@cellar/shared/admin/prices";
import { reencryptSecrets } from "@cellar/shared/admin/secrets";
import {
  createEvaluatorFromFile,
  editEvaluatorFromFile,
  listEvaluators,
  setEvaluatorStatus,
  type EvaluatorCliDeps,
} from "@cellar/shared/admin/evaluators";
import { keyringFromConfig } from "@cellar/shared/crypto";
import { splitList } from "@cellar/shared/config";
import { toCidrs } from "@cellar/shared/webhooks/address";
import { systemResolveDns } from "@cellar/shared/webhooks/destination";
import { compactStoredMetrics } from "@cellar/shared/db/trace-metrics";
import { normalizeEndpoint } from "@cellar/shared/auth/dsn";
import { KEY_KINDS, ROLES, type KeyKind, type Role } from "@cellar/shared/db/schema";
import { DEAD_LETTERS_USAGE, DeadLetterUsageError, runDeadLetters } from "./dead-letters-cli.ts";

const USAGE = `usage: npm run admin -- <command>
  tenant create --name N [--plan free|pro] [--webhooks]
  tenant update --id T [--plan free|pro] [--webhooks on|off] [--retention-days N|default]
  project create --tenant T --name N
  project list --tenant T
  service create --tenant T --name N [--project P]
  user create --tenant T --email E --role viewer|member|admin|owner [--projects P1,P2]
  user list --tenant T
  user update --id U [--projects P1,P2] [--role R]   (replaces the user's projects; --projects "" = none)
  user deprovision --id U
  user password --id U            (reads the new password from standard input)
  user invite --tenant T --email E --role R [--projects P1,P2]   |   user invite --id U
  key create --tenant T --kind telemetry [--name N]
  key create --tenant T --kind dsn-server|dsn-client --service N [--origins O1,O2] [--endpoint URL] [--name N]
      (the DSN carries --endpoint, else INGEST_PUBLIC_URL: the ingest host's public URL; neither: a legacy DSN)
  key update --id K [--name N] [--origins O1,O2]   (--origins "" = any origin)
  key create --user U --kind platform
  key list --tenant T
  key revoke --id K
  intent define --tenant T --service S --name N [--description D] --example E [--example E ...]
  intent list --tenant T --service S
  intent delete --tenant T --service S --name N
  detectors show --tenant T --service S
  detectors set --tenant T --service S --set detector.key=value [--set ...]   (docs/analysis.md)
  detectors reset --tenant T --service S [--detector D]
  maturation failures [--tenant T]
  maturation retry --session <session uuid>
  price set --tenant T --model M --input USD --output USD [--cached-input USD] [--cache-write USD] [--context-window N] [--provider P] [--from YYYY-MM-DD] [--source S]
  price list --tenant T
  evaluator list --tenant T [--service S]   (docs/evaluations.md)
  evaluator create --tenant T --service S --file definition.json   (the body of POST /api/v1/evaluators without service_name)
  evaluator edit --id E --file changes.json   (the body of PUT /api/v1/evaluators/:id: definition fields make a new version)
      (an api_key in the file is sealed under SECRET_ENCRYPTION_KEY; judge URLs follow WEBHOOK_INSECURE_ALLOWLIST)
  evaluator pause --id E   |   evaluator resume --id E
  price delete --tenant T --model M [--from YYYY-MM-DD]
  secrets reencrypt   (re-seals webhook secrets under SECRET_ENCRYPTION_KEY; old keys in SECRET_ENCRYPTION_KEYS_PREVIOUS)
  storage compact-metrics   (trace metrics stored in full as deltas, online; the table grows first: docs/operations.md)
${DEAD_LETTERS_USAGE}`;

class UsageError extends Error {}

const { positionals, values } = (() => {
  try {
    return parseArgs({
      allowPositionals: true,
      options: {
        name: { type: "string" },
        plan: { type: "string" },
        webhooks: { type: "string" },
        id: { type: "string" },
        tenant: { type: "string" },
        project: { type: "string" },
        email: { type: "string" },
        role: { type: "string" },
        projects: { type: "string" },
        kind: { type: "string" },
        service: { type: "string" },
        origins: { type: "string" },
        endpoint: { type: "string" },
        user: { type: "string" },
        description: { type: "string" },
        example: { type: "string", multiple: true },
        set: { type: "string", multiple: true },
        detector: { type: "string" },
        session: { type: "string" },
        "retention-days": { type: "string" },
        help: { type: "boolean" },
        seq: { type: "string" },
        stream: { type: "string" },
        limit: { type: "string" },
        from: { type: "string" },
        all: { type: "boolean" },
        "new-id": { type: "boolean" },
        namespace: { type: "string" },
        model: { type: "string" },
        provider: { type: "string" },
        input: { type: "string" },
        output: { type: "string" },
        "cached-input": { type: "string" },
        "cache-write": { type: "string" },
        "context-window": { type: "string" },
        source: { type: "string" },
        reason: { type: "string" },
        file: { type: "string" },
      },
      // `--webhooks` alone means "on" for tenant create.
      args: process.argv
        .slice(2)
        .map((a, i, all) =>
          a === "--webhooks" && (all[i + 1] === undefined || all[i + 1].startsWith("--")) ? "--webhooks=on" : a,
        ),
    });
  } catch (err) {
    fail(`${(err as Error).message}\n${USAGE}`);
  }
})();

function fail(message: string): never {
  console.error(message);
  process.exit(2);
}

function need(name: keyof typeof values): string {
  const v = values[name] as unknown;
  if (typeof v !== "string" || v.trim() === "") throw new UsageError(`--${name} is required`);
  return v;
}
function plan(v: string | undefined): "free" | "pro" | undefined {
  if (v === undefined) return undefined;
  if (v !== "free" && v !== "pro") throw new UsageError("--plan must be free or pro");
  return v;
}
function role(v: string): Role {
  if (!ROLES.includes(v as Role)) throw new UsageError(`--role must be one of ${ROLES.join(", ")}`);
  return v as Role;
}
function onOff(v: string | undefined): boolean | undefined {
  if (v === undefined) return undefined;
  if (v !== "on" && v !== "off") throw new UsageError("--webhooks must be on or off");
  return v === "on";
}
function retentionDays(v: string | undefined): number | null | undefined {
  if (v === undefined) return undefined;
  if (v === "default") return null;
  if (!/^\d+$/.test(v) || Number(v) < 1 || Number(v) > 36_500)
    throw new UsageError("--retention-days must be a whole number of days from 1 to 36500, or default");
  return Number(v);
}
const list = (v: string | undefined) =>
  v
    ? v
        .split(",")
        .map((s) => s.trim())
        .filter(Boolean)
    : undefined;

/** `name` from the environment, else from a running `npm run dev` (.data/dev.env). */
function serverUrl(name: "DATABASE_URL" | "NATS_URL" | "INGEST_PUBLIC_URL"): string {
  if (process.env[name]) return process.env[name]!;
  const devEnv = join(resolve(import.meta.dir, ".."), ".data/dev.env");
  if (existsSync(devEnv)) {
    const text = readFileSync(devEnv, "utf8");
    const m = text.match(new RegExp(`^${name}=(.+)$`, "m"));
    // dev's NATS runs the deployed users: the CLI connects as `admin` (scripts/dev.ts writes it).
    if (m && name === "NATS_URL")
      for (const k of ["NATS_USER", "NATS_PASSWORD"])
        process.env[k] ??= text.match(new RegExp(`^${k}=(.+)$`, "m"))?.[1].trim();
    if (m) return m[1].trim();
  }
  throw new UsageError(`${name} is not set and no \`npm run dev\` server was found (.data/dev.env)`);
}
const databaseUrl = () => serverUrl("DATABASE_URL");

/**
 * The endpoint a new DSN carries: --endpoint, else INGEST_PUBLIC_URL (environment or a running
 * `npm run dev`). Neither: a legacy DSN, with a warning (SDKs then need their endpoint setting).
 */
function dsnEndpoint(): string | undefined {
  let given = values.endpoint;
  if (given === undefined) {
    try {
      given = serverUrl("INGEST_PUBLIC_URL");
    } catch {
      console.error(
        "warning: neither --endpoint nor INGEST_PUBLIC_URL is set: this is a legacy DSN without its endpoint (SDKs need their endpoint setting)",
      );
      return undefined;
    }
  }
  try {
    return normalizeEndpoint(given);
  } catch (err) {
    throw new UsageError(`--endpoint / INGEST_PUBLIC_URL: ${(err as Error).message}`);
  }
}

/** The keyring `secrets reencrypt` uses: SECRET_ENCRYPTION_KEY (retired ones in SECRET_ENCRYPTION_KEYS_PREVIOUS). */
function secretKeyring() {
  const current = process.env.SECRET_ENCRYPTION_KEY;
  if (!current) return undefined;
  return keyringFromConfig({
    SECRET_ENCRYPTION_KEY: current,
    SECRET_ENCRYPTION_KEYS_PREVIOUS: process.env.SECRET_ENCRYPTION_KEYS_PREVIOUS,
  });
}

/** What the evaluator writer needs, as the platform has it: the keyring, DNS and the judge-URL allow-list. */
function evaluatorDeps(sql: EvaluatorCliDeps["sql"]): EvaluatorCliDeps {
  return {
    sql,
    secretBox: secretKeyring(),
    resolveDns: systemResolveDns,
    allowlist: toCidrs(splitList(process.env.WEBHOOK_INSECURE_ALLOWLIST ?? "")),
    now: () => new Date(),
  };
}

/** A JSON file's content (`-` reads standard input). */
function jsonFile(path: string): unknown {
  let text: string;
  try {
    text = path === "-" ? readFileSync(0, "utf8") : readFileSync(path, "utf8");
  } catch (err) {
    throw new UsageError(`--file: cannot read ${path}: ${(err as Error).message}`);
  }
  try {
    return JSON.parse(text);
  } catch (err) {
    throw new UsageError(`--file: not JSON: ${(err as Error).message}`);
  }
}

async function run(): Promise<unknown> {
  if (values.help || positionals.length < 2) throw new UsageError(USAGE);
  const [resource, action] = positionals;
  if (resource === "dead-letters") {
    const { seq, stream, limit, from, all, namespace, tenant, reason } = values;
    // With a database, a replay or purge counts INGEST dead letters in the ledger before deleting
    // them (docs/ledger.md); without one it waits for a processor's count, as before.
    let database: ReturnType<typeof createDatabase> | undefined;
    try {
      database = createDatabase(databaseUrl(), { max: 1 });
    } catch (err) {
      if (!(err instanceof UsageError)) throw err;
    }
    try {
      return await runDeadLetters(
        action,
        { seq, stream, limit, from, all, newId: values["new-id"], namespace, tenant, reason },
        serverUrl("NATS_URL"),
        database && ((t) => countBeforeDelete(database.sql, t)),
      );
    } finally {
      await database?.close();
    }
  }
  const url = databaseUrl();
  await runMigrations(url);
  const { db, sql, close } = createDatabase(url, { max: 2 });
  try {
    switch (`${resource} ${action}`) {
      case "tenant create":
        return await admin.createTenant(db, {
          name: need("name"),
          plan: plan(values.plan),
          webhooks: onOff(values.webhooks),
        });
      case "tenant update":
        return await admin.updateTenant(db, {
          id: need("id"),
          plan: plan(values.plan),
          webhooks: onOff(values.webhooks),
          retentionDays: retentionDays(values["retention-days"]),
        });
      case "project create":
        return await admin.createProject(db, { tenantId: need("tenant"), name: need("name") });
      case "service create":
        return await admin.createService(db, {
          tenantId: need("tenant"),
          name: need("name"),
          projectId: values.project,
        });
      case "user create": {
        return await admin.createUser(db, {
          tenantId: need("tenant"),
          email: need("email"),
          role: role(need("role")),
          projectIds: list(values.projects),
        });
      }
      case "project list":
        return { projects: await listProjects(db, { tenantId: need("tenant") }) };
      case "user list":
        return { users: await listMembers(db, { tenantId: need("tenant") }) };
      case "user update": {
        if (values.projects === undefined && values.role === undefined)
          throw new UsageError(
            '--projects is required (a comma-separated list of project ids, or "" for none), or --role',
          );
        const id = need("id");
        const changed =
          values.role === undefined ? undefined : await updateUserRole(db, { id, role: role(values.role) });
        const projects =
          values.projects === undefined
            ? undefined
            : await updateUserProjects(db, { id, projectIds: list(values.projects) ?? [] });
        return { id, ...(changed && { role: changed.role }), ...(projects && { projects: projects.projects }) };
      }
      case "key list":
        return { keys: await listKeys(db, { tenantId: need("tenant") }) };
      case "user deprovision":
        return await admin.deprovisionUser(db, { id: need("id") });
      case "user password": {
        // From stdin, never a flag: a flag would land in the shell history and the process list.
        const password = (await Bun.stdin.text()).replace(/\r?\n$/, "");
        return await setPassword(db, { userId: need("id"), password });
      }
      case "user invite": {
        return await createInvitation(db, {
          userId: values.id,
          tenantId: values.tenant,
          email: values.email,
          role: values.role === undefined ? undefined : role(values.role),
          projectIds: list(values.projects),
        });
      }
      case "key create": {
        const kind = need("kind");
        if (!KEY_KINDS.includes(kind as KeyKind)) throw new UsageError(`--kind must be one of ${KEY_KINDS.join(", ")}`);
        return await createApiKey(db, {
          kind: kind as KeyKind,
          tenantId: values.tenant,
          userId: values.user,
          serviceName: values.service,
          origins: list(values.origins),
          name: values.name,
          endpoint: kind.startsWith("dsn-") ? dsnEndpoint() : undefined,
        });
      }
      case "key update":
        return await updateApiKey(db, {
          id: need("id"),
          name: values.name,
          origins: values.origins === undefined ? undefined : (list(values.origins) ?? []),
        });
      case "key revoke":
        return await revokeApiKey(db, { id: need("id") });
      case "intent define":
        return await defineIntent(db, {
          tenantId: need("tenant"),
          service: need("service"),
          name: need("name"),
          description: values.description,
          examples: values.example,
        });
      case "intent list":
        return { intents: await listIntents(db, { tenantId: need("tenant"), service: need("service") }) };
      case "intent delete":
        return await deleteIntent(db, { tenantId: need("tenant"), service: need("service"), name: need("name") });
      case "detectors show":
        return await analysisAdmin.showDetectors(db, { tenantId: need("tenant"), service: need("service") });
      case "detectors set":
        return await analysisAdmin.setDetectors(db, {
          tenantId: need("tenant"),
          service: need("service"),
          settings: values.set ?? [],
        });
      case "detectors reset":
        return await analysisAdmin.resetDetectors(db, {
          tenantId: need("tenant"),
          service: need("service"),
          detector: values.detector,
        });
      case "maturation failures":
        return await analysisAdmin.listMaturationFailures(db, { tenantId: values.tenant });
      case "maturation retry":
        return await analysisAdmin.retryMaturation(db, { sessionPk: need("session") });
      case "price set":
        return await setPrice(db, {
          tenantId: need("tenant"),
          model: need("model"),
          provider: values.provider,
          input: need("input"),
          output: need("output"),
          cachedInput: values["cached-input"],
          cacheWrite: values["cache-write"],
          contextWindow: values["context-window"],
          from: values.from,
          source: values.source,
        });
      case "price list":
        return { prices: await listPrices(db, { tenantId: need("tenant") }) };
      case "price delete":
        return await deletePrice(db, { tenantId: need("tenant"), model: need("model"), from: values.from });
      case "evaluator list":
        return await listEvaluators(db, { tenantId: need("tenant"), service: values.service });
      case "evaluator create":
        return await createEvaluatorFromFile(db, evaluatorDeps(sql), {
          tenantId: need("tenant"),
          service: need("service"),
          body: jsonFile(need("file")),
        });
      case "evaluator edit":
        return await editEvaluatorFromFile(db, evaluatorDeps(sql), { id: need("id"), body: jsonFile(need("file")) });
      case "evaluator pause":
        return await setEvaluatorStatus(db, { id: need("id"), status: "paused" });
      case "evaluator resume":
        return await setEvaluatorStatus(db, { id: need("id"), status: "active" });
      case "secrets reencrypt": {
        const keyring = secretKeyring();
        if (!keyring)
          throw new UsageError(
            "SECRET_ENCRYPTION_KEY is not set (the key to seal under; retired ones in SECRET_ENCRYPTION_KEYS_PREVIOUS)",
          );
        return await reencryptSecrets(sql, keyring);
      }
      case "storage compact-metrics":
        return { compacted: await compactStoredMetrics(sql, { pauseMs: 20 }) };
      default:
        throw new UsageError(`unknown command "${resource} ${action}"\n${USAGE}`);
    }
  } finally {
    await close();
  }
}

try {
  console.log(JSON.stringify(await run()));
  process.exit(0);
} catch (err) {
  if (err instanceof UsageError || err instanceof AdminError || err instanceof DeadLetterUsageError) fail(err.message);
  const pgMessage =
    (err as { code?: string; message?: string })?.code === "22P02"
      ? "an id is not a valid uuid"
      : (err as Error).message;
  fail(`admin: ${pgMessage}`);
}
