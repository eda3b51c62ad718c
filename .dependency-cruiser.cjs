/**
 * The house rules the tool checks (`npm run cycles`; test/house-checks.test.ts runs the same
 * check in the test command):
 * - no import cycle anywhere (issue 22). Type-only imports count: a loop through types still
 *   ties the modules' meanings together;
 * - apps never import each other: what two apps share lives in shared/ (issue 39);
 * - analysis is pure (docs/architecture): the analysis folders reach no module that does I/O,
 *   directly or through others (Postgres, NATS, HTTP, files, sockets, processes);
 * - the dashboard (web/src) takes nothing but types from the server's code: it is built for
 *   the browser, and a value import would pull server modules into its bundle.
 */
const ANALYSIS = "^(apps/processor/src/analysis|shared/analysis)/";
const IO_MODULES = [
  "^node_modules/(postgres|@nats-io|drizzle-orm|elysia|undici)/",
  "^(node:)?(fs|fs/promises|net|tls|http|https|http2|dgram|dns|dns/promises|child_process|cluster|worker_threads)$",
  "^shared/(db/client|nats|ops|lifecycle|deploy|webhooks)[./]",
];
module.exports = {
  forbidden: [
    {
      name: "no-circular",
      severity: "error",
      comment: "Modules import each other in a loop: move what both need into a third module.",
      from: {},
      to: { circular: true },
    },
    {
      name: "apps-apart",
      severity: "error",
      comment: "An app imports another app's code: move what both need into shared/.",
      from: { path: "^apps/([^/]+)/" },
      to: { path: "^apps/", pathNot: "^apps/$1/" },
    },
    {
      name: "analysis-is-pure",
      severity: "error",
      comment: "Analysis reaches a module that does I/O: pass the data in, keep loading and storing in the caller.",
      from: { path: ANALYSIS, pathNot: "\\.test\\.ts$" },
      to: { reachable: true, path: IO_MODULES },
    },
    {
      name: "web-takes-types-only",
      severity: "error",
      comment: "The dashboard imports server code as a value: import its types only (import type).",
      from: { path: "^web/src/" },
      to: { path: "^(apps|shared)/", dependencyTypesNot: ["type-only"] },
    },
  ],
  options: {
    doNotFollow: { path: "node_modules" },
    exclude: { path: "(^|/)(\\.cache|\\.data|dist)/" },
    parser: "swc",
    tsPreCompilationDeps: true,
    tsConfig: { fileName: "tsconfig.json" },
    enhancedResolveOptions: {
      extensions: [".ts", ".tsx", ".js", ".mjs", ".json"],
      exportsFields: ["exports"],
      conditionNames: ["import", "require", "node", "default", "types"],
    },
  },
};
