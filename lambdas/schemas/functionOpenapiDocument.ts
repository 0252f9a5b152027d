import { z } from "zod";
import type { InputSchema, JsonSchema } from "../code/jsonSchema";
import { openObjects } from "../code/openObjects";
import { ERROR_STATUS } from "../http/errors";
import { INVOKE_ACCEPTED, INVOKE_HEADERS, RUN_HEADERS } from "../routes/specs/invocationRoutes";
import { ErrorBody } from "./errorSchemas";
import type { ResponseHeaderName } from "./headerSchemas";
import { answerHeaderNames, headerParameter, responseHeader } from "./openapiOperation";
import { AcceptedRun } from "./runSchemas";

/** What the per-function document is built from: the function, its input schema and its output schema. */
export interface FunctionForDocument {
  name: string;
  description: string | null;
  latest_version: number;
  input_schema: InputSchema;
  output_schema: JsonSchema;
}

/** Components of the service's own OpenAPI document, by id (the Error body, the 202's AcceptedRun). */
function components(...ids: string[]): Record<string, unknown> {
  const { schemas } = z.toJSONSchema(z.globalRegistry, { target: "draft-2020-12", uri: (id) => `#/components/schemas/${id}` });
  return Object.fromEntries(
    ids.map((id) => {
      const { $schema: _dialect, $id: _id, ...schema } = schemas[id] as Record<string, unknown>;
      return [id, schema];
    }),
  );
}

function componentId(schema: z.ZodType): string {
  const id = z.globalRegistry.get(schema)?.id;
  if (!id) throw new Error("The per-function document takes components with an id only");
  return id;
}

/** The input schema as a request body schema (the document names the dialect once, not in every schema). */
function bodySchema(input: InputSchema): JsonSchema {
  const schema: JsonSchema = { ...input };
  delete schema.$schema;
  return schema;
}

/** Header objects, inline (the document has no components.headers), as the service's document types them. */
function headers(names: readonly ResponseHeaderName[]): Record<string, unknown> {
  return Object.fromEntries(answerHeaderNames(names).map((name) => [name, responseHeader(name)]));
}

/**
 * A one-operation OpenAPI 3.1 document for one function: `POST /functions/{name}` with its input
 * schema as the request body, the declared return type's schema (objects open: a result may
 * have more members than its type declares) as the 200 body, the 202 of a run that outlasts the
 * sync window, the error body for 4XX/5XX, and bearer auth. Request headers and the 200 and
 * 202 headers are those of the service's invoke operation. Agent platforms import it as a tool.
 */
export function functionOpenapiDocument(fn: FunctionForDocument, serverUrl: string): Record<string, unknown> {
  const summary = fn.description ?? `Run the browser automation '${fn.name}'`;
  const errorId = componentId(ErrorBody);
  const acceptedId = componentId(AcceptedRun);
  const ref = (id: string) => ({ $ref: `#/components/schemas/${id}` });
  const error = (description: string) => ({ description, headers: headers([]), content: { "application/json": { schema: ref(errorId) } } });
  return {
    openapi: "3.1.0",
    info: {
      title: fn.name,
      version: String(fn.latest_version),
      description: `${summary}\n\nA browserfn function (version ${fn.latest_version}). Every error has the body of the Error schema.`,
    },
    servers: [{ url: serverUrl }],
    paths: {
      [`/functions/${fn.name}`]: {
        post: {
          operationId: fn.name.replace(/-/g, "_"),
          summary: summary.length > 120 ? `${summary.slice(0, 117)}...` : summary,
          description: summary,
          security: [{ bearer: [] }],
          parameters: INVOKE_HEADERS.map(headerParameter),
          requestBody: {
            required: fn.input_schema.required.length > 0,
            description: "The call parameters, by name",
            content: { "application/json": { schema: bodySchema(fn.input_schema) } },
          },
          responses: {
            "200": {
              description: "The run succeeded: the automation's return value (of the latest version's declared return type)",
              headers: headers(RUN_HEADERS),
              content: { "application/json": { schema: openObjects(fn.output_schema) } },
            },
            "202": {
              description: INVOKE_ACCEPTED.description,
              headers: headers(INVOKE_ACCEPTED.headers ?? []),
              content: { "application/json": { schema: ref(acceptedId) } },
            },
            "4XX": error("invalid_parameters (details.parameters lists each bad parameter), missing_token, invalid_token, function_not_found, function_not_ready, rate or plan limits"),
            "5XX": error("The run failed (function_error, function_timeout, function_crashed, …) or the service did"),
          },
        },
      },
    },
    components: {
      schemas: components(errorId, acceptedId),
      securitySchemes: {
        bearer: { type: "http", scheme: "bearer", description: "An API key (bfn_…) or an OAuth 2.0 access token" },
      },
    },
    "x-error-codes": ERROR_STATUS,
  };
}
