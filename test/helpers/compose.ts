/**
 * Runs docker-compose.yml without a container engine (test/deploy.test.ts): reads the file,
 * interpolates `${VAR}` like compose, and turns each service into a local process with the
 * same command, environment and health check, hostnames pointed at 127.0.0.1 and every
 * container port at a free local port.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { mkdirSync, readFileSync } from "node:fs";
import { join, resolve } from "node:path";

export const ROOT = resolve(import.meta.dir, "../..");

export interface ComposeService {
  image?: string;
  build?: unknown;
  command?: string[] | string;
  entrypoint?: string[] | string;
  environment?: Record<string, string | number | boolean | null> | string[];
  depends_on?: Record<string, { condition: string }> | string[];
  healthcheck?: {
    test: string[] | string;
    interval?: string;
    timeout?: string;
    retries?: number;
    start_period?: string;
  };
  volumes?: string[];
  ports?: string[];
  profiles?: string[];
  restart?: string;
  /** Relative CPU weight under contention (default 1024); run here as the nearest nice level. */
  cpu_shares?: number;
}
export interface ComposeFile {
  services: Record<string, ComposeService>;
  volumes?: Record<string, unknown>;
}

/** Compose's `${VAR}`, `${VAR:-default}`, `${VAR-default}`, `${VAR:?error}`, `${VAR?error}`, `$$`. */
export function interpolate(text: string, env: Record<string, string | undefined>): string {
  return text.replace(
    /\$\$|\$\{([A-Za-z_][A-Za-z0-9_]*)(?:(:?)([-?])([^}]*))?\}|\$([A-Za-z_][A-Za-z0-9_]*)/g,
    (whole, name, colon, op, arg, bare) => {
      if (whole === "$$") return "$";
      if (bare) return env[bare] ?? "";
      const value = env[name];
      const missing = value === undefined || (colon === ":" && value === "");
      if (!op) return value ?? "";
      if (op === "-") return missing ? arg : value!;
      if (missing) throw new Error(`required variable ${name} is missing a value: ${arg}`);
      return value!;
    },
  );
}

/** Parses docker-compose.yml and interpolates every string in it (keys stay as written). */
export function loadCompose(path: string, env: Record<string, string | undefined>): ComposeFile {
  const doc = Bun.YAML.parse(readFileSync(path, "utf8")) as ComposeFile;
  const walk = (v: unknown): unknown => {
    if (typeof v === "string") return interpolate(v, env);
    if (Array.isArray(v)) return v.map(walk);
    if (v && typeof v === "object") return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, walk(x)]));
    return v;
  };
  return walk(doc) as ComposeFile;
}

export function envOf(service: ComposeService): Record<string, string> {
  const e = service.environment ?? {};
  if (Array.isArray(e))
    return Object.fromEntries(e.map((kv) => [kv.slice(0, kv.indexOf("=")), kv.slice(kv.indexOf("=") + 1)]));
  return Object.fromEntries(Object.entries(e).map(([k, v]) => [k, v == null ? "" : String(v)]));
}

export function dependsOn(service: ComposeService): Array<{ name: string; condition: string }> {
  const d = service.depends_on ?? [];
  if (Array.isArray(d)) return d.map((name) => ({ name, condition: "service_started" }));
  return Object.entries(d).map(([name, v]) => ({ name, condition: v.condition }));
}

/** Services in an order that starts every dependency first (compose skips profiled services). */
export function startOrder(file: ComposeFile): string[] {
  const order: string[] = [];
  const visit = (name: string, path: string[] = []) => {
    if (order.includes(name)) return;
    if (path.includes(name)) throw new Error(`depends_on cycle: ${[...path, name].join(" -> ")}`);
    const s = file.services[name];
    if (!s) throw new Error(`depends_on names a missing service ${name}`);
    for (const d of dependsOn(s)) visit(d.name, [...path, name]);
    order.push(name);
  };
  for (const [name, s] of Object.entries(file.services)) if (!s.profiles?.length) visit(name);
  return order;
}

/**
 * Container world -> this machine: `<service>:<port>` and `127.0.0.1:<port>` to 127.0.0.1 and
 * the mapped port, `*_PORT` values to the mapped port, bind mounts and named volumes to paths.
 */
export class Localizer {
  constructor(
    readonly services: string[],
    readonly ports: Map<number, number>,
    readonly mounts: Array<{ container: string; host: string }>,
  ) {}

  text(s: string): string {
    let out = s;
    for (const [from, to] of this.ports) {
      const hosts = ["127.0.0.1", "localhost", ...this.services].map((h) => h.replace(/[.]/g, "\\.")).join("|");
      out = out.replace(new RegExp(`(^|[/@\\s'"(])(?:${hosts}):${from}(?![0-9])`, "g"), `$1127.0.0.1:${to}`);
    }
    return this.path(out);
  }

  path(s: string): string {
    for (const m of this.mounts)
      if (s === m.container || s.startsWith(`${m.container}/`)) return m.host + s.slice(m.container.length);
    return s;
  }

  env(env: Record<string, string>): Record<string, string> {
    return Object.fromEntries(
      Object.entries(env).map(([k, v]) => {
        if (/_PORT$/.test(k) && this.ports.has(Number(v))) return [k, String(this.ports.get(Number(v)))];
        return [k, this.text(v)];
      }),
    );
  }

  port(containerPort: number): number {
    const p = this.ports.get(containerPort);
    if (!p) throw new Error(`no local port for container port ${containerPort}`);
    return p;
  }
}

/** Bind mounts (`./x:/y`) relative to the repo, named volumes under `scratch`. */
export function mountsOf(file: ComposeFile, scratch: string): Array<{ container: string; host: string }> {
  const out: Array<{ container: string; host: string }> = [];
  for (const s of Object.values(file.services)) {
    for (const v of s.volumes ?? []) {
      const [src, dst] = v.split(":");
      const host = src.startsWith(".") || src.startsWith("/") ? resolve(ROOT, src) : join(scratch, "volumes", src);
      if (!src.startsWith(".") && !src.startsWith("/")) mkdirSync(host, { recursive: true });
      out.push({ container: dst, host });
    }
  }
  return out;
}

/** The kernel's CFS weight for nice 0..19 (sched_prio_to_weight): what a cpu_share of 1024 is to nice 0. */
const NICE_WEIGHTS = [1024, 820, 655, 526, 423, 335, 272, 215, 172, 137, 110, 87, 70, 56, 45, 36, 29, 23, 18, 15];

/**
 * The nice level whose kernel weight is nearest `cpu_shares` (1024 and above: 0), so a service
 * run as a local process gets the CPU share compose gives its container. Only lower shares
 * map: a negative nice needs privileges a test does not have.
 */
export function niceForCpuShares(shares: number | undefined): number {
  if (shares === undefined) return 0;
  let best = 0;
  for (const [nice, weight] of NICE_WEIGHTS.entries())
    if (Math.abs(weight - shares) < Math.abs(NICE_WEIGHTS[best] - shares)) best = nice;
  return best;
}

export function asArgs(v: string[] | string | undefined): string[] {
  if (v === undefined) return [];
  return Array.isArray(v) ? v : ["sh", "-c", v];
}

/** Seconds from compose durations such as `5s`, `1m30s`. */
export function seconds(d: string | undefined, fallback: number): number {
  if (!d) return fallback;
  let total = 0;
  for (const [, n, unit] of d.matchAll(/(\d+(?:\.\d+)?)(ms|s|m|h)/g))
    total += Number(n) * { ms: 0.001, s: 1, m: 60, h: 3600 }[unit as "ms"];
  return total || fallback;
}

export interface Running {
  name: string;
  child: ChildProcess;
  output: () => string;
  exited: Promise<number>;
}

export function run(name: string, argv: string[], env: Record<string, string>, cwd = ROOT): Running {
  const child = spawn(argv[0], argv.slice(1), { cwd, env, stdio: ["ignore", "pipe", "pipe"] });
  let out = "";
  const keep = (c: Buffer) => {
    out = (out + c.toString()).slice(-20_000);
    if (process.env.DEPLOY_TEST_VERBOSE) process.stderr.write(`[${name}] ${c}`);
  };
  child.stdout!.on("data", keep);
  child.stderr!.on("data", keep);
  const exited = new Promise<number>((res) => child.on("exit", (code, sig) => res(code ?? (sig ? 128 : 0))));
  return { name, child, output: () => out, exited };
}

/** Runs a health check's command once; true when it exits 0 within its timeout. */
export function healthy(argv: string[], env: Record<string, string>, timeoutSeconds: number): Promise<boolean> {
  return new Promise((res) => {
    const child = spawn(argv[0], argv.slice(1), { cwd: ROOT, env, stdio: "ignore" });
    const timer = setTimeout(() => child.kill("SIGKILL"), timeoutSeconds * 1000);
    child.on("error", () => res(false));
    child.on("exit", (code) => {
      clearTimeout(timer);
      res(code === 0);
    });
  });
}
