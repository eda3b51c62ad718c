import { Elysia } from "elysia";
import { notFound } from "@cellar/shared/errors";
import type { Logger } from "@cellar/shared/logger";
import { buildDashboard, type BuiltDashboard } from "./assets.ts";

/** The dashboard's client-side pages: each answers the same HTML, the app routes in the browser. */
export const DASHBOARD_PAGES = [
  "/",
  "/sign-in",
  "/invite",
  "/sessions",
  "/sessions/*",
  "/traces/*",
  "/issues",
  "/issues/*",
  "/webhooks",
  "/webhooks/*",
  "/monitors",
  "/monitors/*",
  "/ledger",
  "/settings",
  "/organization",
  "/setup",
  "/first-trace",
  "/overview",
];

/**
 * Strict by design: only this origin's script and style, no inline code, no framing. The sign-in
 * token is readable by the page's own script (it is sent as Bearer), so keeping every other
 * script out is what protects it.
 */
const SECURITY_HEADERS = {
  "content-security-policy":
    "default-src 'self'; script-src 'self'; style-src 'self'; style-src-attr 'unsafe-inline'; img-src 'self' data:; connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'; object-src 'none'",
  "x-content-type-options": "nosniff",
  "referrer-policy": "no-referrer",
  "x-frame-options": "DENY",
};

/**
 * Serves the dashboard at `/` from the platform app: the bundle is built once, on the first
 * request (or by `warm()`), and kept in memory. The API under /api/v1 is untouched.
 */
export function dashboardRoutes(opts: { logger: Logger; webRoot?: string }) {
  let built: Promise<BuiltDashboard> | undefined;
  const get = () => {
    built ??= buildDashboard(opts.webRoot).catch((err) => {
      built = undefined; // a failed build is retried by the next request
      opts.logger.error("dashboard build failed", { err });
      throw err;
    });
    return built;
  };
  const page = async () =>
    new Response((await get()).html, {
      headers: { "content-type": "text/html; charset=utf-8", "cache-control": "no-cache", ...SECURITY_HEADERS },
    });
  let app = new Elysia({ name: "dashboard" });
  for (const path of DASHBOARD_PAGES) app = app.get(path, page) as typeof app;
  return Object.assign(
    app.get("/assets/:name", async ({ params }) => {
      const d = await get();
      const file = params.name === d.js.name ? d.js : params.name === d.css.name ? d.css : null;
      if (!file) throw notFound();
      const type = file === d.js ? "text/javascript; charset=utf-8" : "text/css; charset=utf-8";
      return new Response(file.body, {
        headers: {
          "content-type": type,
          "cache-control": "public, max-age=31536000, immutable",
          "x-content-type-options": "nosniff",
        },
      });
    }),
    { warm: () => get().then(() => undefined) },
  );
}
