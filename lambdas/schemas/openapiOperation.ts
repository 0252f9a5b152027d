import { z } from "zod";
import type { OtherResponse, RouteSpec } from "../routes/routeSpecs";
import { ErrorBody } from "./errorSchemas";
import { REQUEST_HEADERS, RESPONSE_HEADERS, type RequestHeaderName, type ResponseHeaderName } from "./headerSchemas";
import { errorsByStatus } from "./openapiErrors";
import { PATH_PARAMETERS } from "./pathSchemas";

type Json = Record<string, unknown>;

/** The reference to a schema registered with `.meta({ id })` (the document's components). */
export function schemaRef(schema: z.ZodType): Json {
  const id = z.globalRegistry.get(schema)?.id;
  if (!id) throw new Error("A schema in a route spec needs .meta({ id }) to be a component of the OpenAPI document");
  return { $ref: `#/components/schemas/${id}` };
}

/** A standalone zod schema as JSON Schema (draft 2020-12), without `$schema`. */
function jsonSchema(schema: z.ZodType, io: "input" | "output" = "output"): Json {
  const { $schema: _, ...rest } = z.toJSONSchema(schema, { target: "draft-2020-12", io, unrepresentable: "any" }) as Json;
  return rest;
}

/** A parameter object: the schema's description becomes the parameter's. */
function parameter(name: string, where: "path" | "query" | "header", schema: Json, required: boolean): Json {
  const { description, ...rest } = schema;
  return { name, in: where, required, ...(description ? { description } : {}), schema: rest };
}

/** The OpenAPI operation of a route: parameters, body, and every answer. */
export function operation(route: RouteSpec): Json {
  return {
    operationId: route.operationId,
    summary: route.summary,
    tags: [route.tag],
    security: route.auth ? [{ bearer: [] }] : [],
    parameters: [...pathParameters(route), ...queryParameters(route), ...headerParameters(route)],
    ...(route.body ? { requestBody: requestBody(route.body) } : {}),
    responses: responses(route),
  };
}

function pathParameters(route: RouteSpec): Json[] {
  return [...route.path.matchAll(/\{(\w+)\}/g)].map(([, name = ""]) => {
    const schema = route.params?.[name] ?? (PATH_PARAMETERS as Record<string, z.ZodType>)[name];
    if (!schema) throw new Error(`${route.operationId}: no schema for the path parameter {${name}} (PATH_PARAMETERS or RouteSpec.params)`);
    return parameter(name, "path", jsonSchema(schema), true);
  });
}

/**
 * Query parameters, from the route's query schema: types as the handler receives them (a
 * `limit` is an integer), required as the client sends them (none is). A schema of any names
 * (an invocation's parameters) is one free-form parameter, each member its own query parameter.
 */
function queryParameters(route: RouteSpec): Json[] {
  if (!route.query) return [];
  const output = jsonSchema(route.query) as { properties?: Record<string, Json> };
  const input = jsonSchema(route.query, "input") as { required?: string[] };
  if (!output.properties) {
    return [{ name: "parameters", in: "query", required: false, description: route.query.description, style: "form", explode: true, schema: schemaRef(route.query) }];
  }
  return Object.entries(output.properties).map(([name, property]) => parameter(name, "query", property, input.required?.includes(name) ?? false));
}

function headerParameters(route: RouteSpec): Json[] {
  return (route.headers ?? []).map(headerParameter);
}

/** A request header as an (optional) parameter object. */
export function headerParameter(name: RequestHeaderName): Json {
  return parameter(name, "header", jsonSchema(REQUEST_HEADERS[name]), false);
}

/** A response header as a header object: its schema's description becomes the header's. */
export function responseHeader(name: ResponseHeaderName): Json {
  const { description, ...schema } = jsonSchema(RESPONSE_HEADERS[name]);
  return { description, schema };
}

/** The headers of an answer: X-Request-Id (every answer has it), then the answer's own. */
export function answerHeaderNames(headers: readonly ResponseHeaderName[] = []): ResponseHeaderName[] {
  return ["X-Request-Id", ...headers];
}

/** A JSON body; required when the schema refuses an empty one (the server reads no body as `{}`). */
function requestBody(schema: z.ZodType): Json {
  return { required: !schema.safeParse({}).success, content: { "application/json": { schema: schemaRef(schema) } } };
}

function responses(route: RouteSpec): Json {
  const answers: Record<string, Json> = {};
  answers[route.status] = answer(route.status === 204 ? "No content" : "Success", route.response, route.contentType, route.responseHeaders);
  for (const other of route.otherResponses ?? []) answers[other.status] = otherAnswer(other);
  for (const [status, codes] of errorsByStatus(route)) {
    // An answer the route gives in another shape (the MCP transport's JSON-RPC errors) is documented as that.
    if (answers[status]) continue;
    const headers = [...(route.errorHeaders?.[status] ?? []), ...(status === 429 || status === 503 ? (["Retry-After"] as const) : [])];
    answers[status] = answer(`Error: ${codes.join(", ")}`, ErrorBody, undefined, headers);
  }
  answers["4XX"] = { $ref: "#/components/responses/RequestRefused" };
  return answers;
}

function otherAnswer(other: OtherResponse): Json {
  return answer(other.description, other.response, other.contentType, other.headers);
}

function answer(description: string, schema: z.ZodType | undefined, contentType: string | undefined, headers: readonly ResponseHeaderName[] = []): Json {
  return {
    description,
    headers: Object.fromEntries(answerHeaderNames(headers).map((name) => [name, { $ref: `#/components/headers/${name}` }])),
    ...(schema ? { content: { [contentType ?? "application/json"]: { schema: schemaRef(schema) } } } : {}),
  };
}
