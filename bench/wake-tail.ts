/**
 * What the machine alone does to a request's tail when its cores are busy (issue 41 part 4: the
 * part of bench/flood's p99 that no priority inside this machine can give back). No Cellar code:
 * a bare Bun.serve answers a 1 KB POST, a client sends `--rate` requests a second for `--seconds`,
 * and `N` busy processes (20 ms of CPU, 5 ms asleep, over and over: batch work's bursts, as the
 * processor's and Postgres's when another tenant's large request lands) run at nice 10 beside
 * them. Each configuration, one after the other in the same run:
 * - the floor: no busy process;
 * - cores - 1 busy processes (a core stays free), then as many as the machine has cores;
 * - with every core busy, each priority Linux offers to favour the server over the busy work:
 *   nice 10 alone (as bench/flood and the shipped configs run the processor and Postgres); the
 *   server and client asking for a 300 us or 100 us slice (EEVDF's custom slice, Linux 6.12+:
 *   a shorter slice preempts a longer one on wake-up); the busy processes asking for a 6 ms slice
 *   (the same from the other side); SCHED_BATCH and SCHED_IDLE busy processes (chrt).
 * Printed per configuration: the client's p50/p90/p99/max and the host's CPU steal over it.
 * What priority can fix, the configurations with every core busy show apart from the floor; what
 * is left with SCHED_IDLE (the busy processes run only when nothing else wants a core) is not the
 * guest scheduler's to fix.
 *
 *   bun run bench/wake-tail.ts [--seconds 30] [--rate 100] [--rounds 1]
 */
import { spawn } from "node:child_process";
import { cpus, setPriority } from "node:os";
import { parseArgs } from "node:util";
import { machineCpu, pct, stealShare } from "./lib/proc";
import { setThreadSlices } from "./lib/sched-slice";

const [mode, ...rest] = process.argv.slice(2);

if (mode === "--server") {
  setThreadSlices(Number(rest[0]));
  const server = Bun.serve({
    port: 0,
    fetch: async (request) => {
      await request.text();
      return new Response("ok");
    },
  });
  console.log(server.port);
} else if (mode === "--busy") {
  setThreadSlices(Number(rest[0]));
  for (;;) {
    const t = performance.now();
    while (performance.now() - t < 20);
    await Bun.sleep(5);
  }
} else if (mode === "--client") {
  const { port, sliceNs, rate, seconds } = JSON.parse(rest[0]);
  setThreadSlices(sliceNs);
  const url = `http://127.0.0.1:${port}/`;
  const body = "x".repeat(1000);
  const latencies: number[] = [];
  const start = performance.now();
  const inFlight: Promise<void>[] = [];
  for (let n = 0; n < rate * seconds; n++) {
    const wait = start + (n * 1000) / rate - performance.now();
    if (wait > 0) await Bun.sleep(wait);
    const t0 = performance.now();
    inFlight.push(
      fetch(url, { method: "POST", body }).then(async (res) => {
        await res.text();
        latencies.push(performance.now() - t0);
      }),
    );
  }
  await Promise.all(inFlight);
  console.log(JSON.stringify(latencies));
} else {
  const { values: args } = parseArgs({
    options: {
      seconds: { type: "string", default: "30" },
      rate: { type: "string", default: "100" },
      rounds: { type: "string", default: "1" },
    },
  });
  const cores = cpus().length;
  type Config = { label: string; busy: number; serverSliceNs?: number; busySliceNs?: number; policy?: "-b" | "-i" };
  const configs: Config[] = [
    { label: "floor: no busy process", busy: 0 },
    { label: `${cores - 1} busy at nice 10 (a core free)`, busy: cores - 1 },
    { label: `${cores} busy at nice 10 (every core)`, busy: cores },
    { label: `${cores} busy at nice 10, server and client 300 us slice`, busy: cores, serverSliceNs: 300_000 },
    { label: `${cores} busy at nice 10, server and client 100 us slice`, busy: cores, serverSliceNs: 100_000 },
    { label: `${cores} busy at nice 10, busy 6 ms slice`, busy: cores, busySliceNs: 6_000_000 },
    { label: `${cores} busy SCHED_BATCH at nice 10`, busy: cores, policy: "-b" },
    { label: `${cores} busy SCHED_IDLE`, busy: cores, policy: "-i" },
  ];
  const self = import.meta.path;
  const run = async (c: Config) => {
    const server = spawn(process.execPath, [self, "--server", String(c.serverSliceNs ?? 0)], {
      stdio: ["ignore", "pipe", "inherit"],
    });
    const port = await new Promise<string>((resolve) => server.stdout!.once("data", (d) => resolve(String(d).trim())));
    const busy = Array.from({ length: c.busy }, () => {
      const argv = [process.execPath, self, "--busy", String(c.busySliceNs ?? 0)];
      const full = c.policy ? ["chrt", c.policy, "0", ...argv] : argv;
      const child = spawn(full[0], full.slice(1), { stdio: "ignore" });
      if (c.policy !== "-i") setPriority(child.pid!, 10);
      return child;
    });
    await Bun.sleep(500);
    const steal0 = machineCpu();
    const client = spawn(
      process.execPath,
      [
        self,
        "--client",
        JSON.stringify({ port, sliceNs: c.serverSliceNs ?? 0, rate: Number(args.rate), seconds: Number(args.seconds) }),
      ],
      { stdio: ["ignore", "pipe", "inherit"] },
    );
    let out = "";
    client.stdout!.on("data", (d) => (out += d));
    await new Promise((resolve) => client.once("close", resolve));
    const steal = stealShare(steal0, machineCpu());
    for (const child of [...busy, server]) child.kill();
    const lat = (JSON.parse(out.trim().split("\n").at(-1)!) as number[]).sort((a, b) => a - b);
    const f = (n: number) => `${n.toFixed(2)} ms`;
    console.log(
      `  ${c.label.padEnd(58)} p50 ${f(pct(lat, 50))}  p90 ${f(pct(lat, 90))}  p99 ${f(pct(lat, 99))}  max ${f(lat.at(-1)!)}  (${lat.length} requests; host steal ${steal.toFixed(1)}%)`,
    );
  };
  console.log(
    `wake-tail (${cores} cores; ${args.rate} requests/s for ${args.seconds} s per configuration; busy: 20 ms of CPU, 5 ms asleep)`,
  );
  for (let round = 1; round <= Number(args.rounds); round++) {
    if (Number(args.rounds) > 1) console.log(` round ${round}:`);
    for (const c of configs) await run(c);
  }
}
