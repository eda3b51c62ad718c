/**
 * `bun run bench/long-conversation.ts [--turns 10,100,1000] [--repeat 5]`: what a session's maturation
 * costs per trace at turn T of a growing conversation (turn T re-sends turns 0..T-1), folded from
 * the traces' stored payloads (inflate, parse, fingerprint every message: the maturation before
 * issue 36) and from their digests (docs/analyse-once.md). Per turn: the analyzer is fed turns
 * 0..T-1 untimed, then the last trace is read back from its stored bytes and added, timed (process
 * CPU, median of --repeat); beside it the stored bytes of each. The digests' cost should not grow
 * with T; the payloads' grows with it.
 */
import { parseArgs } from "node:util";
import { decodePayload, encodePayloadSized } from "../shared/db/payload-codec.ts";
import { decodeDigest, encodeDigest } from "../apps/processor/src/analysis/digest.ts";
import { SessionAnalyzer } from "../apps/processor/src/analysis/session.ts";
import type { TraceInput } from "../apps/processor/src/analysis/transcript.ts";

const { values: args } = parseArgs({
  options: { turns: { type: "string", default: "10,100,1000" }, repeat: { type: "string", default: "5" } },
});
const WORDS =
  "order keyboard week page still says processing carrier warehouse refund invoice address switch keycap cable delivery tracking support".split(
    " ",
  );
/** Text of about 200 characters that deflate cannot fold into the previous message's copy. */
function text(seed: number): string {
  let x = seed * 2654435761;
  const out: string[] = [];
  for (let i = 0; i < 30; i++) {
    x = (x * 1103515245 + 12345) % 2147483648;
    out.push(WORDS[x % WORDS.length]);
  }
  return out.join(" ");
}

function payloadOf(turn: number): Record<string, any> {
  const messages: Array<Record<string, unknown>> = [{ role: "system", content: "You are a support assistant." }];
  for (let k = 0; k < turn; k++)
    messages.push({ role: "user", content: text(2 * k) }, { role: "assistant", content: text(2 * k + 1) });
  messages.push({ role: "user", content: text(2 * turn) });
  const start = Date.UTC(2026, 0, 1) + turn * 10_000;
  return {
    provider: "openai",
    session_id: "long",
    start_time: new Date(start).toISOString(),
    end_time: new Date(start + 900).toISOString(),
    request: { model: "gpt-4o-mini", messages },
    responses: [
      {
        id: `r${turn}`,
        model: "gpt-4o-mini-2024-07-18",
        choices: [{ index: 0, message: { role: "assistant", content: text(2 * turn + 1) }, finish_reason: "stop" }],
        usage: { prompt_tokens: 30 * turn, completion_tokens: 5, total_tokens: 30 * turn + 5 },
      },
    ],
  };
}
const meta = (p: Record<string, any>, turn: number) => ({
  pk: `pk${turn}`,
  traceId: `t${String(turn).padStart(5, "0")}`,
  startTime: new Date(p.start_time),
  endTime: new Date(p.end_time),
});
const cpuUs = () => {
  const u = process.cpuUsage();
  return u.user + u.system;
};
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

// Warm-up (the first timed rounds of a fresh process are JIT-compiling).
for (let t = 0; t < 30; t++) encodeDigest(payloadOf(t), 0, 0);
console.log("| turn | payload: stored B, fold us | digest: stored B, fold us | ratio |");
console.log("|---|---|---|---|");
for (const T of args.turns.split(",").map(Number)) {
  const stored = Array.from({ length: T + 1 }, (_, t) => {
    const p = payloadOf(t);
    const encoded = encodePayloadSized(p);
    return { p, payloadZ: encoded.stored, digestZ: encodeDigest(p, encoded.jsonBytes, 0) };
  });
  const read = (t: number, digests: boolean): TraceInput => {
    const s = stored[t];
    return digests && s.digestZ
      ? decodeDigest(s.digestZ, meta(s.p, t))
      : { ...meta(s.p, t), payload: decodePayload({ payload_z: s.payloadZ }) };
  };
  const timeLast = (digests: boolean) => {
    const runs: number[] = [];
    for (let r = 0; r < Number(args.repeat); r++) {
      const a = new SessionAnalyzer({ condensedTranscript: false });
      for (let t = 0; t < T; t++) a.addTrace(read(t, digests));
      const c0 = cpuUs();
      a.addTrace(read(T, digests));
      runs.push(cpuUs() - c0);
      a.finish();
    }
    return median(runs);
  };
  timeLast(true); // warm-up
  const whole = timeLast(false);
  const digest = timeLast(true);
  const last = stored[T];
  console.log(
    `| ${T} | ${last.payloadZ.length}, ${whole} | ${last.digestZ?.length ?? "-"}, ${digest} | ${(whole / Math.max(1, digest)).toFixed(1)}x |`,
  );
}
