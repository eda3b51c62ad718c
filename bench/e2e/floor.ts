import { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import type { NatsConnection } from "@nats-io/transport-node";
import { jetstream, jetstreamManager } from "@nats-io/jetstream";
import type postgres from "postgres";
import { copyField, cpuByProcess, cpuDelta, postmasterPid } from "../lib/proc";
import { makeTemplates } from "../lib/traces";

export interface Floor {
  publishPerSecond: number;
  publishUs: number;
  copyPerSecond: number;
  copyUs: number;
  perSecond: number;
  totalUs: number;
  /** Maturation's own floor (issue 36): CPU per trace of a bare maturation of the same rows. */
  maturationUs: number;
  maturationPerSecond: number;
}

/** Traces per session in the maturation floor (the bench's sessions: a trace every 2 s for 20 s). */
const TRACES_PER_SESSION = 10;
/** Sessions per chunk, and chunks in flight, as the processor's session maturation takes them. */
const SESSIONS_PER_CHUNK = 50;
const CHUNKS_IN_FLIGHT = 4;

/**
 * The floor of one machine for the e2e path: the same trace bodies published to a bare
 * file-backed JetStream stream (256 in flight), then COPYed as trace rows into a bare table of
 * the same columns (no index, no key). CPU of nats-server / Postgres plus this process.
 */
export async function measureFloor(o: {
  nc: NatsConnection;
  sql: postgres.Sql;
  pgDir: string;
  natsPid: number;
  rows: number;
}): Promise<Floor> {
  const templates = makeTemplates(200);
  const bodies = Array.from({ length: o.rows }, (_, i) =>
    templates[i % templates.length].replace("__SESSION__", `floor-${i}`),
  );
  const js = jetstream(o.nc);
  const jsm = await jetstreamManager(o.nc);
  await jsm.streams.add({ name: "FLOOR", subjects: ["floor.>"] });
  const postmaster = postmasterPid(o.pgDir);
  const snap = () => cpuByProcess({ nats: [o.natsPid], bench: [process.pid] }, postmaster);

  let c0 = snap();
  let t0 = performance.now();
  const enc = new TextEncoder();
  for (let i = 0; i < bodies.length; i += 256) {
    await Promise.all(
      bodies.slice(i, i + 256).map((b, k) => js.publish("floor.traces", enc.encode(b), { msgID: `floor-${i + k}` })),
    );
  }
  const pubSeconds = (performance.now() - t0) / 1000;
  const pubCpu = cpuDelta(c0, snap());
  await jsm.streams.delete("FLOOR");

  await o.sql`drop table if exists floor_traces`;
  await o.sql`create table floor_traces (id uuid, tenant_id uuid, trace_service_id uuid, session_pk uuid, trace_id text, session_id text, environment text,
    provider text, model text, start_time timestamptz, end_time timestamptz, payload jsonb, received_at timestamptz)`;
  const uuid = () => crypto.randomUUID();
  const svc = uuid();
  const tenant = uuid();
  const sessionPks = Array.from({ length: Math.ceil(bodies.length / TRACES_PER_SESSION) }, uuid);
  c0 = snap();
  t0 = performance.now();
  const lines = function* () {
    for (let i = 0; i < bodies.length; i += 500) {
      let chunk = "";
      for (let k = i; k < Math.min(bodies.length, i + 500); k++) {
        const now = new Date().toISOString();
        chunk +=
          [
            uuid(),
            tenant,
            svc,
            sessionPks[Math.floor(k / TRACES_PER_SESSION)],
            `floor-${k}`,
            `floor-s${Math.floor(k / TRACES_PER_SESSION)}`,
            "bench",
            "openai",
            "gpt-4o-mini",
            now,
            now,
            copyField(bodies[k]),
            now,
          ].join("\t") + "\n";
      }
      yield chunk;
    }
  };
  await pipeline(Readable.from(lines()), await o.sql`copy floor_traces from stdin`.writable());
  const copySeconds = (performance.now() - t0) / 1000;
  const copyCpu = cpuDelta(c0, snap());

  // Maturation's floor: the same rows as sessions of TRACES_PER_SESSION, matured bare in chunks of
  // SESSIONS_PER_CHUNK (CHUNKS_IN_FLIGHT at once): read by key the rows a maturation folds (their
  // payloads), insert one result row per session, publish one message per chunk.
  await o.sql`create index on floor_traces (session_pk)`;
  await o.sql`drop table if exists floor_results`;
  await o.sql`create table floor_results (session_pk uuid primary key, traces int, computed_at timestamptz)`;
  await jsm.streams.add({ name: "FLOOR", subjects: ["floor.>"] });
  c0 = snap();
  t0 = performance.now();
  let next = 0;
  const worker = async () => {
    for (;;) {
      const at = next;
      next += SESSIONS_PER_CHUNK;
      if (at >= sessionPks.length) return;
      const chunk = sessionPks.slice(at, at + SESSIONS_PER_CHUNK);
      const rows = await o.sql<{ session_pk: string; payload: unknown }[]>`
        select session_pk, payload from floor_traces where session_pk = any(${o.sql.array(chunk)}::uuid[])`;
      const counts = new Map<string, number>();
      for (const r of rows) counts.set(r.session_pk, (counts.get(r.session_pk) ?? 0) + 1);
      await o.sql`insert into floor_results (session_pk, traces, computed_at)
        select x.pk, x.n, now() from unnest(${o.sql.array([...counts.keys()])}::uuid[], ${o.sql.array([...counts.values()])}::int[]) as x(pk, n)`;
      // One message per chunk, as the processor batches a chunk's session maturations (mature.ts).
      await js.publish("floor.matured", enc.encode(JSON.stringify([...counts].map(([pk, n]) => ({ pk, n })))), {
        msgID: `floor-m-${chunk[0]}`,
      });
    }
  };
  await Promise.all(Array.from({ length: CHUNKS_IN_FLIGHT }, worker));
  const maturationSeconds = (performance.now() - t0) / 1000;
  const maturationCpu = cpuDelta(c0, snap());
  await jsm.streams.delete("FLOOR");
  await o.sql`drop table floor_results`;
  await o.sql`drop table floor_traces`;

  const us = (s: number) => Math.round((s * 1e6) / o.rows);
  const publishUs = us(pubCpu.nats + pubCpu.bench);
  const copyUs = us((copyCpu.postgres ?? 0) + copyCpu.bench);
  const f: Floor = {
    publishPerSecond: Math.round(o.rows / pubSeconds),
    publishUs,
    copyPerSecond: Math.round(o.rows / copySeconds),
    copyUs,
    perSecond: Math.round(o.rows / (pubSeconds + copySeconds)),
    totalUs: publishUs + copyUs,
    maturationUs: us((maturationCpu.postgres ?? 0) + (maturationCpu.nats ?? 0) + maturationCpu.bench),
    maturationPerSecond: Math.round(o.rows / maturationSeconds),
  };
  console.log(
    `floor: ${o.rows} rows: publish ${f.publishPerSecond}/s (nats ${us(pubCpu.nats)} + client ${us(pubCpu.bench)} us/row), COPY ${f.copyPerSecond}/s (postgres ${us(copyCpu.postgres ?? 0)} + client ${us(copyCpu.bench)} us/row); serial ${f.perSecond}/s, ${f.totalUs} us CPU/row; ` +
      `bare maturation of the same rows as sessions of ${TRACES_PER_SESSION} ${f.maturationPerSecond} traces/s, ${f.maturationUs} us CPU per trace`,
  );
  return f;
}
