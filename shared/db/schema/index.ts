export * from "./tenancy.ts";
export * from "./telemetry.ts";
export * from "./analysis.ts";
export * from "./webhooks.ts";
export * from "./signin.ts";
export * from "./pricing.ts";
export * from "./scores.ts";
export * from "./monitors.ts";
