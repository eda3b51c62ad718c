import {
  errorResponses,
  ERROR_SCHEMA,
  isOptional,
  jsonContent,
  jsonSchema,
  withRetryAfter,
} from "@cellar/shared/openapi";
import { ERROR_STATUSES } from "../http/schemas.ts";

export const API_PREFIX = "/api/v1";

interface RouteLike {
  method: string;
  path: string;
  hooks?: Record<string, any>;
}

const STATUS_TEXT: Record<number, string> = { ...ERROR_STATUSES, 500: "Server error (never carries internals)" };

/**
 * What every /api/v1 route can answer whatever it does, added to the statuses it declares
 * (docs/platform-api.md, "Errors" and "Limits"): 401 from platformAuth, 503 when Postgres is down
 * or slow (the key lookup itself, databaseTrouble, the request deadline), 429 from the per-key
 * limit unless the route is not counted (`x-cellar-per-key-limit: false`), and for every method
 * but GET the body read by the auth plugin: 400 when it is not JSON, 413 over the cap.
 * test/platform-api-openapi.test.ts drives each of these against every route.
 */
function implicitStatuses(method: string, perKeyLimit: boolean): number[] {
  return [401, 503, ...(perKeyLimit ? [429] : []), ...(method === "GET" ? [] : [400, 413])];
}

/** Query or path parameters from an object schema. */
function parameters(
  where: "query" | "path",
  schema: Record<string, any> | undefined,
  names: string[],
  rename: Record<string, string> = {},
): unknown[] {
  const props: Record<string, any> = schema?.properties ?? {};
  const required = new Set<string>(schema?.required ?? []);
  const list = where === "path" ? names : Object.keys(props);
  return list.map((name) => ({
    name: rename[name] ?? name,
    in: where,
    required: where === "path" ? true : required.has(name),
    ...(props[name]?.description ? { description: props[name].description } : {}),
    schema: props[name] ? jsonSchema(props[name]) : { type: "string" },
  }));
}

function operation(route: RouteLike, openPath: string, pathNames: string[], hooks: Record<string, any>) {
  const {
    "x-cellar-response": response,
    "x-cellar-errors": errors,
    "x-cellar-rename": rename,
    "x-cellar-status": status,
    "x-cellar-per-key-limit": perKeyLimit,
    "x-cellar-also-status": alsoStatus,
    "x-cellar-request": request,
    ...detail
  } = (hooks.detail ?? {}) as Record<string, any>;
  const declared =
    hooks.response && typeof hooks.response === "object" ? (hooks.response[200] ?? hooks.response) : undefined;
  const ok = response ?? (declared && "type" in declared ? declared : undefined);
  const declaredErrors = (errors as number[] | undefined) ?? [400, 401, 403, 404];
  const statuses = [...new Set([...declaredErrors, ...implicitStatuses(route.method, perKeyLimit !== false)])].sort();
  const op: Record<string, unknown> = {
    operationId: `${route.method.toLowerCase()}${openPath
      .replace(/[{}]/g, "")
      .split(/[^A-Za-z0-9]+/)
      .filter(Boolean)
      .map((s) => s[0].toUpperCase() + s.slice(1))
      .join("")}`,
    ...detail,
    parameters: [...parameters("path", hooks.params, pathNames, rename), ...parameters("query", hooks.query, [])],
    responses: {
      [status ?? 200]: {
        description: status === 204 ? "No content" : "OK",
        ...(ok && status !== 204 ? { content: jsonContent(jsonSchema(ok)) } : {}),
      },
      ...(alsoStatus
        ? {
            [alsoStatus]: {
              description: "OK: done before (the earlier result)",
              ...(ok ? { content: jsonContent(jsonSchema(ok)) } : {}),
            },
          }
        : {}),
      ...withRetryAfter(
        errorResponses(Object.fromEntries([...statuses, 500].map((s) => [s, STATUS_TEXT[s] ?? "Error"]))),
      ),
    },
  };
  const body = hooks.body ?? request;
  if (body) op.requestBody = { required: !isOptional(body), content: jsonContent(jsonSchema(body)) };
  return op;
}

/**
 * The platform API's OpenAPI 3.1 document, built from the mounted routes themselves: the same
 * TypeBox schemas that validate params, query and body, plus each route's documented 200 body.
 * Routes added later (webhooks) appear without any change here.
 */
export function buildOpenApi(routes: RouteLike[]) {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const route of routes) {
    if (!route.path.startsWith(`${API_PREFIX}/`) || route.path === `${API_PREFIX}/openapi.json`) continue;
    const method = route.method.toLowerCase();
    if (!["get", "post", "put", "patch", "delete"].includes(method)) continue;
    const hooks = route.hooks ?? {};
    const rename: Record<string, string> = hooks.detail?.["x-cellar-rename"] ?? {};
    const pathNames: string[] = [];
    const openPath = route.path
      .slice(API_PREFIX.length)
      .replace(/:([A-Za-z0-9_]+)/g, (_, n) => (pathNames.push(n), `{${rename[n] ?? n}}`));
    (paths[openPath] ??= {})[method] = operation(route, openPath, pathNames, hooks);
  }
  return {
    openapi: "3.1.0",
    info: {
      title: "Cellar platform API",
      version: "1.0.0",
      description:
        "Reads of sessions, traces, spans, events, metrics, costs, issues and findings; webhook subscription management. See docs/platform-api.md.",
    },
    servers: [{ url: API_PREFIX }],
    security: [{ platformToken: [] }],
    components: {
      securitySchemes: {
        platformToken: {
          type: "apiKey",
          in: "header",
          name: "Authorization",
          description: "`Token <platform API key>`. Any other scheme, key kind or a revoked key is a bare 401.",
        },
      },
      schemas: { Error: ERROR_SCHEMA },
    },
    paths,
  };
}
