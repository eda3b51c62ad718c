import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, readlinkSync, rmSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { freePort, waitForPort } from "../../scripts/infra/ports";
import { ROOT, run, type Running } from "./compose";

/**
 * Whether `commit` is in this checkout's history. A shallow clone (a CI clone of depth 1) lacks
 * an older release: it is fetched from `origin` first (by id, then the whole history), within a
 * minute each. False only when neither the history nor its origin can supply it.
 */
export function haveCommit(commit: string): boolean {
  const has = () => {
    try {
      execFileSync("git", ["-C", ROOT, "cat-file", "-e", `${commit}^{commit}`], { stdio: "ignore" });
      return true;
    } catch {
      return false;
    }
  };
  if (has()) return true;
  for (const args of [
    ["fetch", "--quiet", "--no-tags", "origin", commit],
    ["fetch", "--quiet", "--no-tags", "--unshallow", "origin"],
  ]) {
    try {
      execFileSync("git", ["-C", ROOT, ...args], { stdio: "ignore", timeout: 60_000 });
    } catch {
      // Not fetchable this way (no origin, a server that refuses a fetch by id): try the next.
    }
    if (has()) return true;
  }
  return false;
}

/**
 * Another release of Cellar as a runnable tree: `git archive` of `commit` into a scratch
 * directory, with this checkout's installed packages linked in (a release's dependencies are a
 * subset of the ones installed here; the workspace links `@cellar/*` point into the exported
 * tree, so its apps run its own code). Upgrade tests run its migrations, admin CLI and apps as
 * processes, then this checkout's, on the same database and NATS.
 */
export function exportRelease(commit: string): { root: string; remove(): void } {
  const root = mkdtempSync(join(tmpdir(), "cellar-release-"));
  try {
    const tar = execFileSync("git", ["-C", ROOT, "archive", commit], { maxBuffer: 1 << 30 });
    execFileSync("tar", ["-x", "-C", root], { input: tar });
  } catch (err) {
    rmSync(root, { recursive: true, force: true });
    throw new Error(
      `cannot export release ${commit} from this checkout's git history (a shallow clone lacks it): ${err}`,
    );
  }
  const modules = join(ROOT, "node_modules");
  mkdirSync(join(root, "node_modules/@cellar"), { recursive: true });
  for (const entry of readdirSync(modules))
    if (entry !== "@cellar") symlinkSync(join(modules, entry), join(root, "node_modules", entry));
  // Relative links (../../shared): inside the exported tree they name its own workspaces.
  for (const entry of readdirSync(join(modules, "@cellar")))
    symlinkSync(readlinkSync(join(modules, "@cellar", entry)), join(root, "node_modules/@cellar", entry));
  return { root, remove: () => rmSync(root, { recursive: true, force: true }) };
}

/** The highest migration number a tree's journal lists. */
export function lastMigration(root: string): number {
  const journal = JSON.parse(readFileSync(join(root, "shared/db/migrations/meta/_journal.json"), "utf8"));
  return Math.max(...journal.entries.map((e: { idx: number }) => e.idx));
}

/** Runs a script of a tree to its end (bun), with `env`; its standard output, or an error with both streams. */
export function runScript(root: string, script: string, args: string[], env: Record<string, string>): string {
  try {
    return execFileSync(process.execPath, ["run", join(root, script), ...args], {
      cwd: root,
      env,
      encoding: "utf8",
      stdio: ["ignore", "pipe", "pipe"],
      timeout: 120_000,
    });
  } catch (err) {
    const e = err as { stdout?: string; stderr?: string };
    throw new Error(`${script} ${args.join(" ")} failed: ${e.stderr ?? ""}${e.stdout ?? ""}`);
  }
}

/**
 * An app of a tree as a process, as containers run it (`bun run apps/<app>/src/main.ts`). HTTP
 * apps get `port` (or a free one) and are waited for.
 */
export async function startReleaseApp(
  root: string,
  app: "ingest" | "platform" | "processor" | "dispatcher",
  env: Record<string, string>,
  port?: number,
): Promise<Running & { port: number }> {
  const p = port ?? (await freePort());
  const portVar = app === "ingest" ? "INGEST_PORT" : app === "platform" ? "PLATFORM_PORT" : null;
  const appEnv = { ...env, HEALTH_PORT: String(await freePort()), ...(portVar ? { [portVar]: String(p) } : {}) };
  const proc = run(
    `${app}@${root === ROOT ? "main" : "previous"}`,
    [process.execPath, "run", `apps/${app}/src/main.ts`],
    appEnv,
    root,
  );
  if (portVar)
    await waitForPort(p, 60_000).catch((err) => {
      throw new Error(`${app} did not listen: ${err}\n${proc.output()}`);
    });
  return { ...proc, port: p };
}

/** Stops an app gracefully (SIGTERM: it finishes what it holds) and waits for it to exit. */
export async function stopGracefully(app: Running): Promise<void> {
  if (app.child.exitCode === null && app.child.signalCode === null) app.child.kill("SIGTERM");
  const timer = setTimeout(() => app.child.kill("SIGKILL"), 30_000);
  await app.exited;
  clearTimeout(timer);
}

/** A platform read (path under /api/v1). */
export interface Endpoint {
  method: "GET" | "POST";
  path: string;
  body?: unknown;
}
/** A platform read through an app listening at `platformUrl`: status and parsed body. */
export async function read(platformUrl: string, platformKey: string, e: Endpoint) {
  for (let tries = 0; ; tries++) {
    const res = await fetch(`${platformUrl}/api/v1${e.path}`, {
      method: e.method,
      headers: { authorization: `Token ${platformKey}`, "content-type": "application/json" },
      ...(e.body === undefined ? {} : { body: JSON.stringify(e.body) }),
    });
    const text = await res.text();
    // The platform key's own limit (50/s) is not what this test reads.
    if (res.status === 429 && tries < 20) {
      await Bun.sleep(500);
      continue;
    }
    let body: unknown = text;
    try {
      body = JSON.parse(text);
    } catch {}
    // The overview's window ends now (its `to`); what it holds is compared.
    if (e.path.startsWith("/overview/") && body && typeof body === "object") delete (body as { to?: string }).to;
    return { status: res.status, body };
  }
}
/** Every endpoint's answer, read until two rounds agree (the rollups and deliveries settle after maturation). */
export async function stableAnswers(platformUrl: string, platformKey: string, endpoints: Endpoint[]) {
  let last: string[] = [];
  for (let round = 0; round < 30; round++) {
    const answers = [];
    for (const e of endpoints) answers.push(await read(platformUrl, platformKey, e));
    const now = answers.map((a) => JSON.stringify(a));
    const moving = endpoints.filter((_, i) => now[i] !== last[i]);
    if (moving.length === 0) return answers;
    if (round === 29)
      throw new Error(
        `the answers did not settle within 30 rounds: ${moving.map((e, i) => `${e.path} ${last[endpoints.indexOf(e)]} -> ${now[endpoints.indexOf(e)]}`).join("\n")}`,
      );
    last = now;
    await Bun.sleep(1000);
  }
  throw new Error("unreachable");
}

/**
 * Where `after` does not hold `before`: every key of an object with the same value (recursively),
 * arrays of the same length element by element. Keys only `after` has are collected in `added`.
 */
export function notContained(before: unknown, after: unknown, path: string, added: Set<string>): string[] {
  if (Array.isArray(before)) {
    if (!Array.isArray(after) || after.length !== before.length)
      return [`${path}: ${JSON.stringify(before)} became ${JSON.stringify(after)}`];
    return before.flatMap((b, i) => notContained(b, after[i], `${path}[${i}]`, added));
  }
  if (before !== null && typeof before === "object") {
    if (after === null || typeof after !== "object" || Array.isArray(after))
      return [`${path}: ${JSON.stringify(before)} became ${JSON.stringify(after)}`];
    const a = after as Record<string, unknown>;
    const b = before as Record<string, unknown>;
    for (const k of Object.keys(a)) if (!(k in b)) added.add(`${path.replace(/\[\d+\]/g, "[]")}.${k}`);
    return Object.keys(b).flatMap((k) =>
      k in a ? notContained(b[k], a[k], `${path}.${k}`, added) : [`${path}.${k}: removed`],
    );
  }
  return before === after ? [] : [`${path}: ${JSON.stringify(before)} became ${JSON.stringify(after)}`];
}
