import { expect, test } from "bun:test";
import type { Static } from "@sinclair/typebox";
import { eventProblem, traceProblem } from "@cellar/shared/ingest-rules";
import type { EventPayload as ServerEvent, TracePayload as ServerTrace } from "@cellar/shared/payloads";
import type { EventPayload, TracePayload } from "../sdks/typescript/src/types";
import { chatTrace } from "./helpers/payloads";

// The SDK cannot import the server's schemas (zero runtime dependencies): its types are written
// out, and the typecheck of these assignments keeps them equal to the contract's TypeBox schemas.
export const sdkTraceFromServer = (t: Static<typeof ServerTrace>): TracePayload => t;
export const serverTraceFromSdk = (t: TracePayload): Static<typeof ServerTrace> => t;
export const sdkEventFromServer = (e: Static<typeof ServerEvent>): EventPayload => e;
export const serverEventFromSdk = (e: EventPayload): Static<typeof ServerEvent> => e;

test("payloads typed by the SDK pass the ingest host's own checks", () => {
  const trace: TracePayload = chatTrace({
    sessionId: "s",
    messages: [{ role: "user", content: "Hi" }],
    reply: "Yo",
  }) as unknown as TracePayload;
  expect(traceProblem(trace)).toBeNull();
  const event: EventPayload = { name: "n", session_id: "s", timestamp: new Date().toISOString() };
  expect(eventProblem(event)).toBeNull();
});
