/**
 * A local JetStream cluster on loopback: N nats-server processes (default 3) routed to each
 * other, each with its own store directory and fixed ports, so a node can be killed, paused and
 * restarted in place (the chaos run and `npm run dev -- --cluster`).
 */
import { spawn, type ChildProcess } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import { join, relative } from "node:path";
import { findNatsServer } from "./nats-server";
import { freePort, waitForPort } from "./ports";
import { signalProcess, waitForExit } from "./processes";

export interface ClusterNode {
  name: string;
  port: number;
  clusterPort: number;
  url: string;
  /** Undefined while the node is down. */
  process?: ChildProcess;
}

export interface RunningNatsCluster {
  /** Every node's client URL, comma-separated: what NATS_URL takes. */
  url: string;
  nodes: ClusterNode[];
  /** kill -9: no shutdown, no flush. */
  kill(index: number): Promise<void>;
  /** Starts a stopped node again on the same ports and store. */
  restart(index: number): Promise<void>;
  /** SIGSTOP / SIGCONT: the node keeps its sockets but answers nothing. */
  pause(index: number): void;
  resume(index: number): void;
  /** Resolves once every node reports a JetStream meta leader and the cluster is whole. */
  waitHealthy(timeoutMs?: number): Promise<void>;
  stop(): Promise<void>;
}

export interface ClusterOptions {
  storeDir: string;
  size?: number;
  /** Client ports; free ones are picked when omitted. */
  ports?: number[];
  maxPayloadBytes?: number;
  quiet?: boolean;
  /** Extra lines for every node's config (auth, TLS...). */
  extraConfig?: string;
  /** Config files every node includes (e.g. deploy/nats/users.conf), by absolute path. */
  includes?: string[];
  /** Extra environment of every node (e.g. the passwords users.conf reads). */
  env?: Record<string, string>;
}

export async function startNatsCluster(opts: ClusterOptions): Promise<RunningNatsCluster> {
  const bin = findNatsServer();
  const size = opts.size ?? 3;
  const maxPayload = Math.max(opts.maxPayloadBytes ?? 8 * 1024 * 1024, 1024 * 1024);
  const nodes: ClusterNode[] = [];
  for (let i = 0; i < size; i++) {
    const port = opts.ports?.[i] ?? (await freePort());
    nodes.push({ name: `n${i + 1}`, port, clusterPort: await freePort(), url: `nats://127.0.0.1:${port}` });
  }
  const monitorPorts = await Promise.all(nodes.map(() => freePort()));
  const confPaths = nodes.map((node, i) => {
    const dir = join(opts.storeDir, node.name);
    mkdirSync(dir, { recursive: true });
    const routes = nodes.filter((n) => n !== node).map((n) => `nats-route://127.0.0.1:${n.clusterPort}`);
    const conf = [
      `server_name: ${node.name}`,
      `listen: "127.0.0.1:${node.port}"`,
      `http: "127.0.0.1:${monitorPorts[i]}"`,
      `max_payload: ${maxPayload}`,
      `max_pending: ${maxPayload * 8}`,
      `jetstream { store_dir: ${JSON.stringify(dir)} }`,
      `cluster {`,
      `  name: cellar`,
      `  listen: "127.0.0.1:${node.clusterPort}"`,
      `  routes: [${routes.map((r) => JSON.stringify(r)).join(", ")}]`,
      `}`,
      // nats-server resolves an include relative to the including file, even an absolute path.
      ...(opts.includes ?? []).map((f) => `include ${JSON.stringify(relative(dir, f))}`),
      opts.extraConfig ?? "",
    ].join("\n");
    const path = join(dir, "nats.conf");
    writeFileSync(path, conf + "\n");
    return path;
  });

  const launch = async (i: number) => {
    const child = spawn(bin, ["-c", confPaths[i]], {
      env: { ...process.env, ...opts.env },
      stdio: ["ignore", opts.quiet === false ? "inherit" : "ignore", opts.quiet === false ? "inherit" : "ignore"],
    });
    nodes[i].process = child;
    child.once("exit", () => {
      if (nodes[i].process === child) nodes[i].process = undefined;
    });
    await waitForPort(nodes[i].port, 20_000);
  };
  await Promise.all(nodes.map((_, i) => launch(i)));

  const cluster: RunningNatsCluster = {
    url: nodes.map((n) => n.url).join(","),
    nodes,
    async kill(i) {
      const p = nodes[i].process;
      if (!p) return;
      signalProcess(p.pid!, "SIGCONT");
      p.kill("SIGKILL");
      await waitForExit(p);
    },
    async restart(i) {
      if (nodes[i].process) await cluster.kill(i);
      await launch(i);
    },
    pause: (i) => signalProcess(nodes[i].process?.pid, "SIGSTOP"),
    resume: (i) => signalProcess(nodes[i].process?.pid, "SIGCONT"),
    async waitHealthy(timeoutMs = 60_000) {
      const deadline = Date.now() + timeoutMs;
      let last = "";
      while (Date.now() < deadline) {
        const states = await Promise.all(
          monitorPorts.map(async (p, i) => {
            if (!nodes[i].process) return "down";
            try {
              const res = await fetch(`http://127.0.0.1:${p}/healthz`, { signal: AbortSignal.timeout(2_000) });
              return res.ok ? "ok" : `healthz ${res.status}: ${(await res.text()).slice(0, 200)}`;
            } catch (err) {
              return String(err);
            }
          }),
        );
        if (states.every((s) => s === "ok")) return;
        last = states.join("; ");
        await new Promise((r) => setTimeout(r, 250));
      }
      throw new Error(`NATS cluster not healthy within ${timeoutMs} ms: ${last}`);
    },
    async stop() {
      await Promise.all(
        nodes.map(async (n) => {
          const p = n.process;
          if (!p) return;
          signalProcess(p.pid!, "SIGCONT");
          p.kill("SIGTERM");
          const t = setTimeout(() => p.kill("SIGKILL"), 5_000);
          await waitForExit(p);
          clearTimeout(t);
        }),
      );
    },
  };
  return cluster;
}
