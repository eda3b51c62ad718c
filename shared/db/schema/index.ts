export * from "./tenancy";
export * from "./telemetry";
export * from "./analysis";
export * from "./webhooks";
export * from "./signin";
export * from "./pricing";
