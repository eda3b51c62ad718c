/**
 * `npm run bench:dashboard`: time to first render of two dashboard pages in Debian's headless
 * Chromium (playwright-core), against apps/platform/src/main.ts in a child process over loopback
 * and an embedded Postgres seeded with SQL:
 *   - the sessions list of a service with 10,000 matured sessions (first page of 50, total counted);
 *   - a session whose transcript has 1,000 items (the first 500 -- the API's largest page -- then
 *     all 1,000 after "Show more").
 * "First render" = from navigation start (performance.timeOrigin) to the frame in which the rows
 * are in the DOM, read in the page. Floors measured in the same run, in the same browser:
 *   - bare navigation: a one-paragraph HTML page from a bare Bun server (navigation + first frame);
 *   - the API read(s) the page needs, fetched from the page itself with the same token.
 *
 *   bun run bench/dashboard.ts [--sessions 10000] [--runs 10]
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { chromium, type Page } from "playwright-core";
import { setPassword } from "@cellar/shared/admin/signin";
import { CHROMIUM_FLAGS, ensureChromium } from "../scripts/infra/chromium";
import { runBench } from "./lib/harness";
import { seedMaturedSessions, seedService } from "./lib/seed";

const { values: args } = parseArgs({
  options: { sessions: { type: "string", default: "10000" }, runs: { type: "string", default: "10" } },
});
const SESSIONS = Number(args.sessions);
const RUNS = Number(args.runs);
const PASSWORD = "bench password 1234";

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const r1 = (x: number) => Math.round(x * 10) / 10;

await runBench("dashboard", { nats: true }, async (bench) => {
  const { database } = bench;
  const sql = database.sql;
  const tenant = await bench.tenant({ email: "owner@bench.test" });
  await setPassword(database.db, { userId: tenant.ownerId, password: PASSWORD });
  const svc = await seedService(database.db, tenant.tenantId, "bench-bot");
  const T = tenant.tenantId;
  const S = svc.id;
  // Same shapes as bench/reads.ts: matured sessions with rollups; one 1,000-item transcript with a
  // 3 KB tool result every fourth item (lean reads preview it).
  await seedMaturedSessions(sql, { tenantId: T, serviceId: S, count: SESSIONS });
  const [long] = await sql<{ id: string }[]>`
    insert into sessions (tenant_id, trace_service_id, session_id, status, first_activity_at, last_activity_at, last_ingested_at, maturation_count, matured_at, activity_seq)
    values (${T}, ${S}, 'long-1', 'matured', now() - interval '20 days', now() - interval '20 days', now() - interval '20 days', 1, now(), 1) returning id`;
  await sql`
    insert into session_analyses (session_pk, tenant_id, trace_service_id, session_id, maturation_count, computed_at, through_ingested_at, through_activity_seq, item_count, metrics)
    values (${long.id}, ${T}, ${S}, 'long-1', 1, now(), now(), 1, 1000, '{}'::jsonb)`;
  await sql`
    insert into transcript_items (session_pk, position, tenant_id, item_id, kind, role, timestamp, trace_id, span_id, item)
    select ${long.id}, g, ${T}, 'itm_' || lpad(g::text, 16, '0'), k.kind, k.role, now() - interval '2 hours' + g * interval '3 seconds', 'trace-' || (g / 4), null,
      jsonb_build_object('id', 'itm_' || lpad(g::text, 16, '0'), 'type', k.kind, 'role', k.role, 'timestamp', to_char(now() - interval '2 hours' + g * interval '3 seconds', 'YYYY-MM-DD"T"HH24:MI:SS"Z"'),
        'traceId', 'trace-' || (g / 4), 'spanId', null, 'toolName', case when k.kind like 'tool%' then 'lookup_order' end,
        'content', case when k.kind = 'tool_result' then repeat('{"row": "result data"} ', 130) else repeat('Customer message about an order, ', 10) end)
    from generate_series(0, 999) g
    cross join lateral (select (array['user', 'assistant', 'tool_call', 'tool_result'])[g % 4 + 1] as kind,
      (array['user', 'assistant', 'assistant', 'tool'])[g % 4 + 1] as role) k`;
  await sql`vacuum analyze`;

  const { port } = await bench.spawnApp("platform", {
    env: { LOG_LEVEL: "warn" },
    stdio: ["ignore", "inherit", "inherit"],
  });
  const base = `http://127.0.0.1:${port}`;
  const signIn = await fetch(`${base}/auth/sign-in`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ email: "owner@bench.test", password: PASSWORD }),
  });
  const { token } = (await signIn.json()) as { token: string };

  // Floor: a bare Bun server answering a one-paragraph HTML page (navigation + first frame).
  const bare = Bun.serve({
    port: 0,
    hostname: "127.0.0.1",
    fetch: () =>
      new Response("<!doctype html><title>bare</title><p>bare</p>", { headers: { "content-type": "text/html" } }),
  });
  bench.onStop(() => bare.stop(true));
  const bareBase = `http://127.0.0.1:${bare.port}/`;
  const profile = mkdtempSync(join(tmpdir(), "cellar-bench-chromium-"));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: ensureChromium(),
    headless: true,
    args: CHROMIUM_FLAGS,
    viewport: { width: 1280, height: 800 },
  });
  bench.onStop(async () => {
    await context.close();
    rmSync(profile, { recursive: true, force: true });
  });
  await context.addInitScript((t) => localStorage.setItem("cellar.dashboard.token", t), token);
  const page = context.pages()[0] ?? (await context.newPage());
  page.setDefaultTimeout(60_000);

  /** ms from navigation start until `selector` matches at least `count` elements in a frame. */
  async function firstRender(p: Page, path: string, [selector, count]: [string, number]): Promise<number> {
    await p.goto("about:blank");
    await p.goto(path.startsWith("http") ? path : base + path, { waitUntil: "commit" });
    const handle = await p.waitForFunction(
      ([sel, n]) => (document.querySelectorAll(sel).length >= n ? performance.now() : false),
      [selector, count] as const,
      { polling: "raf" },
    );
    return (await handle.jsonValue()) as number;
  }
  async function inPage(fn: string): Promise<number> {
    return page.evaluate(fn) as Promise<number>;
  }
  const apiTimer = (path: string, body?: unknown) => `(async () => {
    const t = performance.now();
    const r = await fetch(${JSON.stringify(`/api/v1${path}`)}, ${JSON.stringify(body === undefined ? { headers: { authorization: `Bearer ${token}` } } : { method: "POST", headers: { authorization: `Bearer ${token}`, "content-type": "application/json" }, body: JSON.stringify(body) })});
    await r.text();
    if (r.status !== 200) throw new Error("status " + r.status);
    return performance.now() - t;
  })()`;

  const SESSIONS_READY: [string, number] = ["table.list tbody tr", 50];
  const TRANSCRIPT_READY: [string, number] = ["ol.transcript > li", 500];
  const cold = {
    sessions: await firstRender(page, "/sessions?service=bench-bot", SESSIONS_READY),
    transcript: await firstRender(page, "/sessions/bench-bot/long-1", TRANSCRIPT_READY),
  };
  // Main-thread CPU split (Chromium's own counters, in ms): unlike wall time it does not grow
  // when other work competes for the cores.
  const cdp = await context.newCDPSession(page);
  await cdp.send("Performance.enable");
  const cpu = async () => {
    const { metrics } = await cdp.send("Performance.getMetrics");
    const get = (n: string) => (metrics.find((x: { name: string }) => x.name === n)?.value ?? 0) * 1000;
    return {
      script: get("ScriptDuration"),
      layout: get("LayoutDuration") + get("RecalcStyleDuration"),
      task: get("TaskDuration"),
    };
  };
  // Within one document only: the counters restart with each navigation.
  const cpuRows: Record<string, Array<{ script: number; layout: number; task: number }>> = { all1000: [] };
  const delta = (a: { script: number; layout: number; task: number }, b: typeof a) => ({
    script: b.script - a.script,
    layout: b.layout - a.layout,
    task: b.task - a.task,
  });
  const rows: Record<string, number[]> = {
    sessions: [],
    transcript: [],
    all1000: [],
    bare: [],
    apiSessions: [],
    apiTranscript: [],
  };
  for (let i = 0; i < RUNS; i++) {
    rows.sessions.push(await firstRender(page, "/sessions?service=bench-bot", SESSIONS_READY));
    rows.apiSessions.push(
      await inPage(
        apiTimer("/telemetry/otel/sessions/filtered", {
          serviceName: "bench-bot",
          sort: { field: "lastActivityAt", direction: "desc" },
          limit: 50,
          offset: 0,
        }),
      ),
    );
    rows.transcript.push(await firstRender(page, "/sessions/bench-bot/long-1", TRANSCRIPT_READY));
    rows.apiTranscript.push(await inPage(apiTimer("/telemetry/otel/sessions/bench-bot/long-1/transcript?limit=500")));
    const c0 = await cpu();
    // Clicked from inside the page: a role query over 500 items would time Playwright, not the app.
    const t = await page.evaluate(() => {
      const started = performance.now();
      [...document.querySelectorAll("button")].find((b) => b.textContent!.startsWith("Show more"))!.click();
      return started;
    });
    await page.waitForFunction(() => document.querySelectorAll("ol.transcript > li").length === 1000, undefined, {
      polling: "raf",
    });
    rows.all1000.push((await inPage("performance.now()")) - t);
    cpuRows.all1000.push(delta(c0, await cpu()));
    rows.bare.push(await firstRender(page, bareBase, ["p", 1]));
  }
  const m = Object.fromEntries(Object.entries(rows).map(([k, v]) => [k, r1(median(v))]));
  const cpuMedian = (k: string) => ({
    scriptMs: r1(median(cpuRows[k].map((x) => x.script))),
    styleLayoutMs: r1(median(cpuRows[k].map((x) => x.layout))),
    mainThreadTaskMs: r1(median(cpuRows[k].map((x) => x.task))),
  });
  const report = {
    sessions: SESSIONS,
    runs: RUNS,
    sessionsPage: {
      coldMs: r1(cold.sessions),
      medianMs: m.sessions,
      floorBareNavigationMs: m.bare,
      floorApiReadMs: m.apiSessions,
      ratioToFloors: r1(m.sessions / (m.bare + m.apiSessions)),
    },
    transcriptPage: {
      coldMs: r1(cold.transcript),
      medianFirst500Ms: m.transcript,
      floorBareNavigationMs: m.bare,
      floorApiReadMs: m.apiTranscript,
      ratioToFloors: r1(m.transcript / (m.bare + m.apiTranscript)),
      showMoreTo1000Ms: m.all1000,
      showMoreCpu: cpuMedian("all1000"),
    },
  };
  console.log(JSON.stringify(report, null, 2));
});
