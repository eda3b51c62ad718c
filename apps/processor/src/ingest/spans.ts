/** Span derivation lives in shared/spans.ts: the processor writes with it, the platform reads with it. */
export { type DerivedSpan, deriveSpans, spanIdKey, stableId, traceIdFor } from "@cellar/shared/spans";
