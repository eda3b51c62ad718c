import { spawnSync } from "node:child_process";
import { join } from "node:path";

export interface AdminResult {
  code: number;
  /** stdout parsed as JSON, or null when it is not JSON. */
  json: any;
  stdout: string;
  stderr: string;
}

/** Runs `scripts/admin.ts` as an operator would (its own process), against `databaseUrl`. */
export function runAdmin(
  args: string[],
  opts: { databaseUrl: string; input?: string; env?: Record<string, string> },
): AdminResult {
  const r = spawnSync(process.execPath, ["run", join(import.meta.dir, "../../scripts/admin.ts"), ...args], {
    env: { ...process.env, DATABASE_URL: opts.databaseUrl, ...opts.env },
    encoding: "utf8",
    input: opts.input ?? "",
  });
  let json: unknown = null;
  try {
    json = JSON.parse(r.stdout);
  } catch {}
  return { code: r.status ?? 1, json, stdout: r.stdout, stderr: r.stderr };
}
