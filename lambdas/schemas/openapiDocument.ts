import { z } from "zod";
import { ERROR_STATUS } from "../http/errors";
import { ROUTE_SPECS, type RouteSpec } from "../routes/routeSpecs";
import { ErrorBody } from "./errorSchemas";

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
      description: "Browser automations as serverless HTTP APIs. Every error has the body of the Error schema.",
    },
    servers: [{ url: serverUrl }],
    paths,
    components: {
      schemas,
      securitySchemes: {
        bearer: { type: "http", scheme: "bearer", description: "An API key (bfn_…) or an OAuth 2.0 access token" },
      },
    },
    "x-error-codes": ERROR_STATUS,
  };
}

function operation(route: RouteSpec): Record<string, unknown> {
  const ref = (schema: z.ZodType) => ({ $ref: `#/components/schemas/${z.globalRegistry.get(schema)?.id}` });
  const pathParams = [...route.path.matchAll(/\{(\w+)\}/g)].map(([, name]) => ({
    name,
    in: "path",
    required: true,
    schema: { type: "string" },
  }));
  const queryParams = route.query ? queryParameters(route.query) : [];
  const headerParams = (route.headers ?? []).map((header) => ({ name: header.name, in: "header", required: false, description: header.description, schema: { type: "string" } }));
  return {
    operationId: route.operationId,
    summary: route.summary,
    security: route.auth ? [{ bearer: [] }] : [],
    parameters: [...pathParams, ...queryParams, ...headerParams],
    ...(route.body ? { requestBody: { required: false, content: { "application/json": { schema: ref(route.body) } } } } : {}),
    responses: {
      [route.status]: route.response
        ? { description: "Success", content: { [route.contentType ?? "application/json"]: { schema: ref(route.response) } } }
        : { description: "Success" },
      default: { description: "Error", content: { "application/json": { schema: ref(ErrorBody) } } },
    },
  };
}

function queryParameters(schema: z.ZodType): Record<string, unknown>[] {
  const json = z.toJSONSchema(schema, { target: "draft-2020-12" }) as {
    properties?: Record<string, { description?: string }>;
  };
  return Object.entries(json.properties ?? {}).map(([name, property]) => ({
    name,
    in: "query",
    required: false,
    description: property.description,
    schema: { type: "string" },
  }));
}
