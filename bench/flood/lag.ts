/**
 * An event-loop lag probe for one process of bench/flood (ingest): preloaded with
 * `FLOOD_INGEST_BUN_FLAGS="--preload ./bench/flood/lag.ts" FLOOD_LAG_FILE=<path>`, it appends
 * one CSV line per record, `kind,epoch ms at the start,ms,detail`:
 * - `lag`: a 2 ms timer that fired more than 4 ms late (the loop was held from the start for
 *   `ms`); detail = the process's CPU time over that gap (ms, every thread): near `ms` the loop was
 *   busy, near 0 it waited for a core;
 * - `req`: an HTTP request from reaching the app's fetch handler to its response; detail = path
 *   and the status answered (`/v1/traces 429`), so a lag can be lined up with the 429s in it;
 * - `parse`: a JSON.parse of more than 64 KB (one piece, cannot yield); detail = characters;
 * - `write`: a socket write of more than 64 KB (node:net, the NATS client's); detail = bytes;
 * - `publish`: a JetStream publish from the call to its PubAck; detail = payload bytes;
 * - `decode`: a protobufjs decode of a message of more than 64 KB in one call (one piece); detail =
 *   bytes;
 * - `grpc`: a gRPC call from grpc-js calling its handler (the message read) to the handler's
 *   answer; detail = message bytes;
 * - `call`: a gRPC call from its stream's arrival to the stream's close, admitted or refused;
 *   detail = the grpc-status it was answered (8 RESOURCE_EXHAUSTED: a refusal; `?` if none went
 *   out), so a lag can be lined up with the refusals answered in it;
 * - `turn` (FLOOD_LAG_TURNS=1): a setImmediate callback and the microtasks it started that ran
 *   more than 3 ms; detail = where it was scheduled (the first frames of ingest's own code). A
 *   slice of a many-item request (shared/steps.ts) is one of these.
 * The marks wrap the runtime's own functions from outside (JSON.parse, net.Socket's write,
 * Bun.serve's handler, the JetStream client's publish, protobufjs's generated decoders, grpc-js's
 * service handlers): ingest's code is not changed. Line them
 * up with FLOOD_DETAIL's timelines: `bun bench/flood/lag-report.ts`.
 */
import { appendFileSync } from "node:fs";
import { Socket } from "node:net";
import { JetStreamClientImpl } from "@nats-io/jetstream/internal";
import * as grpc from "@grpc/grpc-js";
import protobuf from "protobufjs";

const file = process.env.FLOOD_LAG_FILE;
const LARGE = 64 * 1024;
if (file) {
  const lines: string[] = [];
  const epoch = (perf: number) => (performance.timeOrigin + perf).toFixed(1);
  const record = (kind: string, startPerf: number, detail: string | number) =>
    lines.push(`${kind},${epoch(startPerf)},${(performance.now() - startPerf).toFixed(2)},${detail}`);
  const cpuMs = () => {
    const c = process.cpuUsage();
    return (c.user + c.system) / 1000;
  };

  let last = performance.now();
  let lastCpu = cpuMs();
  setInterval(() => {
    const now = performance.now();
    const cpu = cpuMs();
    const lag = now - last - 2;
    if (lag > 4) lines.push(`lag,${epoch(last + 2)},${lag.toFixed(1)},${(cpu - lastCpu).toFixed(1)}`);
    last = now;
    lastCpu = cpu;
  }, 2).unref();
  setInterval(() => {
    if (lines.length) appendFileSync(file, `${lines.splice(0).join("\n")}\n`);
  }, 1000).unref();

  const parse = JSON.parse;
  JSON.parse = ((text: string, reviver?: (this: unknown, key: string, value: unknown) => unknown) => {
    if (typeof text !== "string" || text.length <= LARGE) return parse(text, reviver);
    const t = performance.now();
    try {
      return parse(text, reviver);
    } finally {
      record("parse", t, text.length);
    }
  }) as typeof JSON.parse;

  const write = Socket.prototype.write;
  Socket.prototype.write = function (this: Socket, chunk: unknown, ...rest: unknown[]) {
    const n = (chunk as { length?: number })?.length ?? 0;
    if (n <= LARGE) return (write as (...a: unknown[]) => boolean).call(this, chunk, ...rest);
    const t = performance.now();
    try {
      return (write as (...a: unknown[]) => boolean).call(this, chunk, ...rest);
    } finally {
      record("write", t, n);
    }
  } as typeof Socket.prototype.write;

  const publish = JetStreamClientImpl.prototype.publish;
  JetStreamClientImpl.prototype.publish = function (this: JetStreamClientImpl, subject, data, opts) {
    const t = performance.now();
    const bytes = typeof data === "string" ? data.length : (data?.length ?? 0);
    const done = publish.call(this, subject, data, opts);
    done.then(
      () => record("publish", t, bytes),
      () => record("publish-failed", t, bytes),
    );
    return done;
  };

  // protobufjs generates each type's decoder on its first use (Type#setup): wrapped there.
  const setup = protobuf.Type.prototype.setup;
  protobuf.Type.prototype.setup = function (this: protobuf.Type) {
    const done = setup.call(this);
    const decode = this.decode;
    this.decode = function (this: protobuf.Type, reader: protobuf.Reader | Uint8Array, ...rest: unknown[]) {
      const n = reader instanceof Uint8Array ? reader.length : 0;
      const call = () => (decode as (...a: unknown[]) => protobuf.Message).call(this, reader, ...rest);
      if (n <= LARGE) return call();
      const t = performance.now();
      try {
        return call();
      } finally {
        record("decode", t, n);
      }
    } as typeof this.decode;
    return done;
  };

  const addService = grpc.Server.prototype.addService;
  grpc.Server.prototype.addService = function (this: grpc.Server, service, implementation) {
    const wrapped: grpc.UntypedServiceImplementation = {};
    for (const [name, handler] of Object.entries(implementation))
      wrapped[name] = ((call: grpc.ServerUnaryCall<Buffer, Buffer>, callback: (...a: unknown[]) => void) => {
        const t = performance.now();
        const n = call.request?.length ?? 0;
        return (handler as (...a: unknown[]) => void)(call, (...a: unknown[]) => {
          record("grpc", t, n);
          callback(...a);
        });
      }) as grpc.UntypedHandleCall;
    return addService.call(this, service, wrapped);
  };

  // Every call's stream, from grpc-js's stream handler (which of the two depends on channelz) to
  // its close; its grpc-status read from the headers or trailers it was answered with.
  type H2Stream = {
    respond: (headers: Record<string, unknown>, options?: unknown) => void;
    sendTrailers: (headers: Record<string, unknown>) => void;
    once: (event: "close", fn: () => void) => void;
  };
  const serverProto = grpc.Server.prototype as unknown as Record<string, unknown>;
  for (const name of ["_streamHandler", "_channelzHandler"]) {
    const handler = serverProto[name];
    if (typeof handler !== "function") continue;
    serverProto[name] = function (this: unknown, extra: unknown, stream: H2Stream, headers: unknown) {
      const t = performance.now();
      let status = "?";
      const seen = (h: Record<string, unknown> | undefined) => {
        if (h?.["grpc-status"] !== undefined) status = String(h["grpc-status"]);
      };
      const { respond, sendTrailers } = stream;
      stream.respond = function (this: H2Stream, h, options) {
        seen(h);
        return respond.call(this, h, options);
      };
      stream.sendTrailers = function (this: H2Stream, h) {
        seen(h);
        return sendTrailers.call(this, h);
      };
      stream.once("close", () => record("call", t, status));
      return handler.call(this, extra, stream, headers);
    };
  }

  if (process.env.FLOOD_LAG_TURNS === "1") {
    const immediate = globalThis.setImmediate;
    const site = () =>
      (new Error().stack ?? "")
        .split("\n")
        .filter((l) => l.includes("/apps/") || l.includes("/shared/"))
        .slice(0, 2)
        .map((l) =>
          l
            .trim()
            .replace(/^at /, "")
            .replace(/\(?(?:file:\/\/)?[^()]*\/(apps|shared)\//, "$1/")
            .replace(/[,)]/g, ""),
        )
        .join(" < ");
    globalThis.setImmediate = ((fn: (...a: unknown[]) => void, ...args: unknown[]) => {
      const from = site();
      return immediate(() => {
        const t = performance.now();
        fn(...args);
        // Queued after the continuation the callback resumed: runs once that slice awaits again.
        queueMicrotask(() => {
          if (performance.now() - t > 3) record("turn", t, from || "?");
        });
      });
    }) as typeof setImmediate;
  }

  const serve = Bun.serve;
  Bun.serve = ((options: Parameters<typeof Bun.serve>[0]) => {
    const o = options as { fetch?: (this: unknown, r: Request, s: unknown) => Response | Promise<Response> };
    const handler = o.fetch;
    if (!handler) return serve(options);
    return serve({
      ...options,
      fetch(this: unknown, request: Request, server: unknown) {
        const t = performance.now();
        const path = new URL(request.url).pathname;
        const answer = Promise.resolve(handler.call(this, request, server));
        answer.then(
          (response) => record("req", t, `${path} ${response.status}`),
          () => record("req", t, `${path} ?`),
        );
        return answer;
      },
    } as Parameters<typeof Bun.serve>[0]);
  }) as typeof Bun.serve;
}
