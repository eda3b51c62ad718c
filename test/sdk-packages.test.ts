// The SDKs install as their READMEs say (issue 37), from this checkout with no package index:
// - the TypeScript SDK's folder alone (a copy with the build tools it declares) packs with
//   `npm pack`, whose prepack builds dist/; the tarball installs into a fresh npm project and
//   imports under Node and Bun; the README's three-line start runs as written; a smoke script
//   from the installed package sends an event to the real ingest host;
// - the Python SDK installs with `pip install --no-index ./sdks/python` (the README's line) into a
//   fresh `python3 -m venv` (Debian's python3, its own old pip and setuptools, no wheel), and the
//   release's wheel and sdist (the in-tree backend) install the same way; the installed package
//   imports and sends to the real ingest host.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { spawnSync } from "node:child_process";
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, join } from "node:path";
import { bootstrapTenant } from "@cellar/shared/admin/tenancy";
import { createApiKey } from "@cellar/shared/auth/key-store";
import { createDatabase, type Database } from "@cellar/shared/db/client";
import { installPython, installTarball, PY_SDK, ROOT, TS_SDK } from "../scripts/release";
import { snippets } from "../web/src/pages/first-trace-snippets";
import { type AppProcesses, startAppProcesses } from "./helpers/app-processes";
import { createTestDatabase } from "./helpers/infra";

const scratch = mkdtempSync(join(tmpdir(), "cellar-packages-"));
let testDb: Awaited<ReturnType<typeof createTestDatabase>>;
let database: Database;
let stack: AppProcesses;
let dsn = "";
let venvPython = "";
// A stand-in for the OpenAI API: the first-trace snippets call chat completions once.
const COMPLETION = {
  id: "chatcmpl-first",
  object: "chat.completion",
  created: 1764300000,
  model: "gpt-4o-mini",
  choices: [{ index: 0, message: { role: "assistant", content: "Hello!" }, finish_reason: "stop" }],
  usage: { prompt_tokens: 5, completion_tokens: 2, total_tokens: 7 },
};
const fakeOpenAI = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: () => Response.json(COMPLETION) });

/** A command, its stdout; asynchronous so this process keeps serving the fake API meanwhile. */
async function sh(cmd: string, args: string[], opts: { cwd?: string; env?: NodeJS.ProcessEnv } = {}) {
  const proc = Bun.spawn([cmd, ...args], { ...opts, stdout: "pipe", stderr: "pipe" });
  const [out, err, code] = await Promise.all([
    new Response(proc.stdout).text(),
    new Response(proc.stderr).text(),
    proc.exited,
  ]);
  if (code !== 0) throw new Error(`${cmd} ${args.join(" ")} failed (${code}):\n${out}\n${err}`);
  return out;
}

beforeAll(async () => {
  testDb = await createTestDatabase();
  database = createDatabase(testDb.url, { max: 2 });
  stack = await startAppProcesses(testDb.url, ["ingest"]);
  const tenant = await bootstrapTenant(database.db, { name: "packages" });
  dsn = (
    await createApiKey(database.db, {
      kind: "dsn-server",
      tenantId: tenant.tenantId,
      serviceName: "package-smoke",
      endpoint: stack.env.INGEST_PUBLIC_URL,
    })
  ).key;
}, 120_000);

afterAll(async () => {
  fakeOpenAI.stop(true);
  await stack?.stop();
  await database?.close();
  await testDb?.drop();
  rmSync(scratch, { recursive: true, force: true });
});

describe("the TypeScript SDK's tarball", () => {
  let tarball = "";
  let project = "";

  test("the folder alone packs: prepack builds dist/ with the build tools the package declares", async () => {
    const pkg = JSON.parse(readFileSync(join(TS_SDK, "package.json"), "utf8"));
    expect(pkg.name).toBe("cellar-sdk");
    expect(pkg.scripts.prepack).toContain("scripts/build.ts");
    expect(Object.keys(pkg.devDependencies)).toEqual(expect.arrayContaining(["bun", "typescript"]));
    // A copy of the tracked files only (no dist/, no node_modules of its own); the build tools come
    // from node_modules beside it, as `npm ci` in the folder puts them (its package-lock.json).
    const copy = join(scratch, "typescript");
    const tracked = (await sh("git", ["ls-files"], { cwd: TS_SDK })).trim().split("\n");
    for (const file of tracked) cpSync(join(TS_SDK, file), join(copy, file), { recursive: true });
    symlinkSync(join(ROOT, "node_modules"), join(copy, "node_modules"));
    const out = await sh("npm", ["pack", "--json", "--pack-destination", scratch], { cwd: copy });
    const [info] = JSON.parse(out.slice(out.search(/^\[/m)));
    const files = info.files.map((f: { path: string }) => f.path);
    expect(files).toEqual(expect.arrayContaining(["dist/index.js", "dist/openai.js", "dist/index.d.ts", "README.md"]));
    tarball = join(scratch, info.filename);
  }, 120_000);

  test("installs into a fresh project offline and imports under Node and Bun", async () => {
    project = installTarball(tarball, join(scratch, "project"));
    const imports =
      'import { Cellar, sampleHash } from "cellar-sdk"; import { observeOpenAI } from "cellar-sdk/openai";' +
      'import { observeAnthropic } from "cellar-sdk/anthropic";' +
      "console.log([Cellar, observeOpenAI, observeAnthropic].map((f) => typeof f).join(), sampleHash('a'));";
    expect((await sh("node", ["--input-type=module", "-e", imports], { cwd: project })).trim()).toBe(
      "function,function,function 444641715",
    );
    writeFileSync(join(project, "imports.mjs"), imports);
    expect((await sh(process.execPath, ["imports.mjs"], { cwd: project })).trim()).toBe(
      "function,function,function 444641715",
    );
  }, 120_000);

  test("the README's three-line start imports what it uses and runs as written (the openai package beside it)", async () => {
    const readme = readFileSync(join(TS_SDK, "README.md"), "utf8");
    const start = readme.slice(readme.indexOf("## Start")).match(/```ts\n([\s\S]*?)```/)?.[1] ?? "";
    expect(start).toContain('import OpenAI from "openai";');
    expect(project).not.toBe("");
    symlinkSync(join(ROOT, "node_modules/openai"), join(project, "node_modules/openai")); // no dependencies of its own
    expect(start.trim().split("\n")).toHaveLength(3);
    // The start as written, then one call through it (to the stand-in API); its exit hook sends the trace.
    const call = `const r = await openai.chat.completions.create({ model: "gpt-4o-mini", messages: [{ role: "user", content: "Hi" }] });`;
    writeFileSync(join(project, "start.ts"), `${start}\n${call}\nconsole.log(r.choices[0].message.content);\n`);
    const env = {
      ...process.env,
      CELLAR_DSN: dsn,
      OPENAI_API_KEY: "sk-test",
      OPENAI_BASE_URL: `http://127.0.0.1:${fakeOpenAI.port}/v1`,
    };
    expect((await sh(process.execPath, ["start.ts"], { cwd: project, env })).trim()).toBe("Hello!");
  }, 120_000);

  test("the installed package sends to the ingest host under Node and Bun", async () => {
    expect(project).not.toBe("");
    const smoke = (runtime: string) =>
      `import { Cellar } from "cellar-sdk";
       const cellar = new Cellar({ dsn: process.env.CELLAR_DSN });
       cellar.event({ name: "smoke", session_id: "smoke-${runtime}" });
       const r = await cellar.flush();
       console.log(JSON.stringify({ sent: r.sent, refused: r.refused, dropped: r.dropped }));`;
    for (const [runtime, cmd] of [
      ["node", "node"],
      ["bun", process.execPath],
    ]) {
      writeFileSync(join(project, `smoke-${runtime}.mjs`), smoke(runtime));
      const out = await sh(cmd, [`smoke-${runtime}.mjs`], { cwd: project, env: { ...process.env, CELLAR_DSN: dsn } });
      expect(JSON.parse(out)).toEqual({ sent: 1, refused: 0, dropped: 0 });
    }
  }, 120_000);

  test("the dashboard's first-trace TypeScript snippet runs as shown against the installed tarball", async () => {
    expect(project).not.toBe("");
    const code = snippets(dsn, "package-smoke", stack.env.INGEST_PUBLIC_URL).typescript;
    // Its install line names the file `npm run release` writes.
    expect(code).toContain("npm install /path/to/cellar/dist/release/cellar-sdk-*.tgz openai");
    expect(new Bun.Glob("cellar-sdk-*.tgz").match(basename(tarball))).toBe(true);
    writeFileSync(join(project, "first-trace.mjs"), `${code}\nconsole.log(JSON.stringify(cellar.stats));\n`);
    const env = {
      ...process.env,
      OPENAI_API_KEY: "sk-test",
      OPENAI_BASE_URL: `http://127.0.0.1:${fakeOpenAI.port}/v1`,
    };
    const out = await sh("node", ["first-trace.mjs"], { cwd: project, env });
    expect(JSON.parse(out)).toMatchObject({ sent: 1, refused: 0, dropped: 0 });
  }, 120_000);
});

describe("the Python SDK in a fresh virtual environment, no package index", () => {
  const smoke = (session: string) => `
import cellar_sdk, os
client = cellar_sdk.Client(os.environ["CELLAR_DSN"], flush_at_exit=False)
client.event("smoke", session_id="${session}")
r = client.flush(10)
print(r.sent, r.refused, r.dropped, cellar_sdk.sample_hash("a"), cellar_sdk.__file__.startswith(os.environ["VENV"]))
`;
  const runIn = async (python: string, session: string) =>
    (
      await sh(python, ["-c", smoke(session)], {
        cwd: scratch,
        env: { ...process.env, CELLAR_DSN: dsn, VENV: join(python, "../..") },
      })
    ).trim();

  test("pip install --no-index ./sdks/python (the README's line): imports and sends", async () => {
    venvPython = installPython(PY_SDK, join(scratch, "venv-path"));
    expect(await runIn(venvPython, "smoke-py-path")).toBe("1 0 0 444641715 True");
  }, 120_000);

  test("the dashboard's first-trace Python snippet runs as shown in that venv", async () => {
    expect(venvPython).not.toBe("");
    const code = snippets(dsn, "package-smoke", stack.env.INGEST_PUBLIC_URL).python;
    expect(code).toContain("pip install /path/to/cellar/sdks/python openai");
    // The official openai package is not installable here: a stand-in module with its shape.
    const stub = join(scratch, "openai-stub");
    mkdirSync(stub, { recursive: true });
    writeFileSync(
      join(stub, "openai.py"),
      `import types\nclass OpenAI:\n    def __init__(self):\n        self.chat = types.SimpleNamespace(completions=types.SimpleNamespace(create=lambda **kw: ${JSON.stringify(COMPLETION)}))\n`,
    );
    const out = await sh(venvPython, ["-c", `${code}\nprint(cellar.get_client().stats())`], {
      cwd: scratch,
      env: { ...process.env, PYTHONPATH: stub },
    });
    expect(out).toContain("sent=1, refused=0, dropped=0");
  }, 60_000);

  test("the root README's Python first screen sends a trace as written", async () => {
    expect(venvPython).not.toBe("");
    const readme = readFileSync(join(ROOT, "README.md"), "utf8");
    const block = [...readme.matchAll(/```sh\n([\s\S]*?)```/g)]
      .map((m) => m[1])
      .find((b) => b.includes("./sdks/python"));
    const [venvLine, ...rest] = block!.trim().split("\n");
    expect(venvLine).toBe(
      "python3 -m venv /tmp/cellar-venv && /tmp/cellar-venv/bin/pip install --no-index ./sdks/python",
    );
    // The venv line is what the first test did (into its own scratch venv); the rest runs as written.
    const script = rest
      .join("\n")
      .replaceAll("/tmp/cellar-venv", join(venvPython, "../.."))
      .replace("<server DSN>", dsn);
    expect(await sh("bash", ["-c", script], { cwd: ROOT })).toContain("FlushResult(sent=1, refused=0, dropped=0");
  }, 60_000);

  test("the release's wheel and sdist install offline and import", async () => {
    const out = join(scratch, "py-release");
    const [wheel, sdist] = (await sh("python3", [join(PY_SDK, "backend/cellar_build.py"), out])).trim().split("\n");
    expect(wheel).toMatch(/cellar_sdk-\d+\.\d+\.\d+-py3-none-any\.whl$/);
    expect(sdist).toMatch(/cellar_sdk-\d+\.\d+\.\d+\.tar\.gz$/);
    // Into the same venv (one venv keeps the suite fast), each replacing the one before.
    const pip = join(venvPython, "../pip");
    await sh(pip, ["install", "--no-index", "--force-reinstall", "--no-cache-dir", wheel]);
    expect(await runIn(venvPython, "smoke-py-wheel")).toBe("1 0 0 444641715 True");
    await sh(pip, ["install", "--no-index", "--force-reinstall", "--no-cache-dir", sdist]);
    expect(await runIn(venvPython, "smoke-py-sdist")).toBe("1 0 0 444641715 True");
  }, 120_000);

  test("the backend reads pyproject.toml the same without tomllib (Python < 3.11)", async () => {
    const check = `
import sys, tomllib
sys.path.insert(0, "backend")
import cellar_build
text = open("pyproject.toml", encoding="utf-8").read()
full = tomllib.loads(text)["project"]
small = cellar_build._read_project_table(text)
keys = ["name", "description", "requires-python", "classifiers", "dependencies"]
print(all(full[k] == small[k] for k in keys))
`;
    expect((await sh("python3", ["-c", check], { cwd: PY_SDK })).trim()).toBe("True");
  });
});
