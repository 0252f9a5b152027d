import { z } from "zod";
import { ERROR_STATUS } from "../http/errors";
import { type ApiTag, ROUTE_SPECS, type RouteSpec } from "../routes/routeSpecs";
import { ErrorBody } from "./errorSchemas";
import { RESPONSE_HEADERS, type ResponseHeaderName } from "./headerSchemas";
import { operation, responseHeader, schemaRef } from "./openapiOperation";

/** What each tag of the document groups. */
const TAGS: Record<ApiTag, string> = {
  functions: "Deploy, list, read, update, fork and delete functions; their versions and call statistics",
  invocations: "Call a function: 200 with its result, or 202 while the run goes on",
  runs: "Runs as they happen and after: status, result, logs, artifacts, server-sent events",
  secrets: "A function's secrets (values go in, never come out)",
  profiles: "The account's browser profiles: saved cookies, localStorage and IndexedDB that keep a login between runs",
  webhooks: "Where the ends of a function's runs are POSTed, signed: deliveries and the signing secret",
  usage: "Metered usage and plans",
  keys: "The account's API keys",
  mcp: "The account's functions as tools of an MCP client",
  meta: "Liveness and this document",
};

const DESCRIPTION = [
  "Browser automations as serverless HTTP APIs (docs/api.md has the whole API).",
  "Every error, from every route, has the body of the Error schema with a stable `code`; `x-error-codes` maps each code to its status.",
  "Any request may carry `x-service-request-origin` and `x-service-sdk-version` (free text, optional), kept with the request log and, for invocations, with the run.",
].join(" ");

/** The OpenAPI 3.1 document, generated from the route specs and their zod schemas. */
export function openapiDocument(serverUrl: string): Record<string, unknown> {
  const { schemas } = z.toJSONSchema(z.globalRegistry, {
    target: "draft-2020-12",
    uri: (id) => `#/components/schemas/${id}`,
  });
  for (const schema of Object.values(schemas)) {
    delete (schema as Record<string, unknown>).$schema;
    delete (schema as Record<string, unknown>).$id;
  }
  const paths: Record<string, Record<string, unknown>> = {};
  for (const route of ROUTE_SPECS as readonly RouteSpec[]) {
    if (route.openapi === false) continue;
    paths[route.path] ??= {};
    (paths[route.path] as Record<string, unknown>)[route.method.toLowerCase()] = operation(route);
  }
  return {
    openapi: "3.1.0",
    info: {
      title: "browserfn",
      version: "1",
      description: DESCRIPTION,
      license: { name: "MIT", identifier: "MIT" },
    },
    servers: [{ url: serverUrl, description: "The service that served this document" }],
    tags: Object.entries(TAGS).map(([name, description]) => ({ name, description })),
    paths,
    components: {
      schemas,
      responses: {
        RequestRefused: {
          description:
            "Refused before any route: a malformed request (400 invalid_request), one that did not arrive in time (408 request_timeout), " +
            "a body over the limit (413 payload_too_large) or headers over it (431 headers_too_large)",
          headers: { "X-Request-Id": { $ref: "#/components/headers/X-Request-Id" } },
          content: { "application/json": { schema: schemaRef(ErrorBody) } },
        },
      },
      headers: Object.fromEntries((Object.keys(RESPONSE_HEADERS) as ResponseHeaderName[]).map((name) => [name, responseHeader(name)])),
      securitySchemes: {
        bearer: {
          type: "http",
          scheme: "bearer",
          bearerFormat: "API key (bfn_…) or JWT",
          description: "An API key (bfn_…) or an OAuth 2.0 access token (a JWT of the configured issuer)",
        },
      },
    },
    "x-error-codes": ERROR_STATUS,
  };
}
