import { z } from "zod";
import type { InputSchema, JsonSchema } from "../code/jsonSchema";
import { ERROR_STATUS } from "../http/errors";
import { ErrorBody } from "./errorSchemas";

/** What the per-function document is built from: the function, its input schema and its output schema. */
export interface FunctionForDocument {
  name: string;
  description: string | null;
  latest_version: number;
  input_schema: InputSchema;
  output_schema: JsonSchema;
}

const RUN_HEADERS = {
  "X-Run-Id": { description: "The run's id (GET /runs/{run_id})", schema: { type: "string" } },
  "X-Function-Version": { description: "The version that ran", schema: { type: "string" } },
  "X-Duration-Ms": { description: "The run's duration in milliseconds", schema: { type: "string" } },
};

const ACCEPTED = {
  type: "object",
  properties: {
    run_id: { type: "string" },
    status: { type: "string", enum: ["queued", "running"] },
    status_url: { type: "string", description: "GET it (with the same token) for the run's outcome" },
  },
  required: ["run_id", "status", "status_url"],
};

/** The Error schema of the service's own OpenAPI document (every error has that body). */
function errorSchema(): Record<string, unknown> {
  const { schemas } = z.toJSONSchema(z.globalRegistry, { target: "draft-2020-12", uri: (id) => `#/components/schemas/${id}` });
  const id = z.globalRegistry.get(ErrorBody)?.id ?? "Error";
  const schema = { ...(schemas[id] as Record<string, unknown>) };
  delete schema.$schema;
  delete schema.$id;
  return schema;
}

/** The input schema as a request body schema (the document names the dialect once, not in every schema). */
function bodySchema(input: InputSchema): JsonSchema {
  const schema: JsonSchema = { ...input };
  delete schema.$schema;
  return schema;
}

/**
 * A one-operation OpenAPI 3.1 document for one function: `POST /functions/{name}` with its input
 * schema as the request body, the declared return type's schema as the 200 body, the 202 of a
 * run that outlasts the sync window, the error body for 4XX/5XX, and bearer auth. Agent
 * platforms import it as a tool.
 */
export function functionOpenapiDocument(fn: FunctionForDocument, serverUrl: string): Record<string, unknown> {
  const summary = fn.description ?? `Run the browser automation '${fn.name}'`;
  const error = (description: string) => ({
    description,
    content: { "application/json": { schema: { $ref: "#/components/schemas/Error" } } },
  });
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
          parameters: [
            {
              name: "Idempotency-Key",
              in: "header",
              required: false,
              description: "1..255 characters: a retry with the same key and parameters within 24 h starts no second run",
              schema: { type: "string" },
            },
          ],
          requestBody: {
            required: fn.input_schema.required.length > 0,
            description: "The call parameters, by name",
            content: { "application/json": { schema: bodySchema(fn.input_schema) } },
          },
          responses: {
            "200": {
              description: "The run succeeded: the automation's return value",
              headers: RUN_HEADERS,
              content: { "application/json": { schema: fn.output_schema } },
            },
            "202": {
              description: "The run outlasted the sync window (or Prefer: respond-async was sent) and goes on",
              content: { "application/json": { schema: ACCEPTED } },
            },
            "4XX": error("invalid_parameters (details.parameters lists each bad parameter), missing_token, invalid_token, function_not_found, function_not_ready, rate or plan limits"),
            "5XX": error("The run failed (function_error, function_timeout, function_crashed, …) or the service did"),
          },
        },
      },
    },
    components: {
      schemas: { Error: errorSchema() },
      securitySchemes: {
        bearer: { type: "http", scheme: "bearer", description: "An API key (bfn_…) or an OAuth 2.0 access token" },
      },
    },
    "x-error-codes": ERROR_STATUS,
  };
}
