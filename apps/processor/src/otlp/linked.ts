import { CHOICE_EVENT, PER_MESSAGE_EVENTS } from "@cellar/shared/otlp/messages";

/**
 * Event names that carry a model call's conversation when an instrumentation logs messages as OTLP
 * log records (docs/otlp.md, "Messages as log records"). The maturation store
 * (maturation/store.ts: otelConversationTraceIds, withOtelMessages) gives them back to their call,
 * in whichever session they were stored, and keeps them out of the sessions' event streams.
 */
export const MESSAGE_EVENT_NAMES = [
  ...Object.keys(PER_MESSAGE_EVENTS),
  CHOICE_EVENT,
  "gen_ai.client.inference.operation.details",
];
