/**
 * `cellar-sdk/otel`: for apps already on OpenTelemetry (Vercel AI SDK, LangChain, OpenLLMetry).
 * A span exporter and a span processor configured by the DSN alone, sending OTLP/HTTP to the
 * ingest host's /v1/traces (docs/otlp.md). They are added to the app's own tracer provider: no
 * global registration, so no conflict with another exporter already there. The OpenTelemetry
 * packages are peer dependencies.
 */

import { OTLPTraceExporter } from "@opentelemetry/exporter-trace-otlp-http";
import { BatchSpanProcessor, type SpanExporter } from "@opentelemetry/sdk-trace-base";
import { DsnError, parseDsn } from "./dsn.ts";

export interface CellarOtelOptions {
  dsn: string;
  /** Needed only for a legacy DSN that does not carry its endpoint. */
  endpoint?: string;
  /** Extra OTLP exporter settings (timeout, compression, ...). */
  exporter?: Omit<ConstructorParameters<typeof OTLPTraceExporter>[0] & object, "url" | "headers">;
}

export function cellarSpanExporter(options: CellarOtelOptions): SpanExporter {
  const dsn = parseDsn(options.dsn);
  const endpoint = (options.endpoint ?? dsn.endpoint)?.replace(/\/+$/, "");
  if (!endpoint) throw new DsnError("this DSN does not carry its endpoint: set the `endpoint` option");
  return new OTLPTraceExporter({
    ...options.exporter,
    url: `${endpoint}/v1/traces`,
    headers: { authorization: `Bearer ${options.dsn}` },
  });
}

/** A BatchSpanProcessor around `cellarSpanExporter`: `new NodeTracerProvider({ spanProcessors: [cellarSpanProcessor({ dsn })] })`. */
export function cellarSpanProcessor(
  options: CellarOtelOptions & { batch?: ConstructorParameters<typeof BatchSpanProcessor>[1] },
): BatchSpanProcessor {
  return new BatchSpanProcessor(cellarSpanExporter(options), options.batch);
}
