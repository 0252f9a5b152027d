import type { z } from "zod";
import type { ErrorCode } from "../http/errors";
import type { RequestHeaderName, ResponseHeaderName } from "../schemas/headerSchemas";

export type HttpMethod = "GET" | "POST" | "PUT" | "PATCH" | "DELETE";

/** The part of the API a route belongs to (its OpenAPI tag). */
export type ApiTag = "functions" | "invocations" | "runs" | "secrets" | "profiles" | "webhooks" | "usage" | "keys" | "mcp" | "meta";

/** An answer of a route besides its success and its errors (a 202, a 204, a redirect…). */
export interface OtherResponse {
  status: number;
  description: string;
  response?: z.ZodType;
  /** The body's content type when it is not JSON. */
  contentType?: string;
  headers?: readonly ResponseHeaderName[];
}

/** What a route is, without its handler: read by the OpenAPI document, the local server and the CDK stack. */
export interface RouteSpec {
  operationId: string;
  method: HttpMethod;
  /** API Gateway path template, e.g. `/functions/{ref}/info`. */
  path: string;
  summary: string;
  tag: ApiTag;
  auth: boolean;
  status: number;
  body?: z.ZodType;
  query?: z.ZodType;
  response?: z.ZodType;
  /** Headers of the success answer besides X-Request-Id (which every answer has). */
  responseHeaders?: readonly ResponseHeaderName[];
  /** Answers besides the success and the errors. */
  otherResponses?: readonly OtherResponse[];
  /**
   * The error codes of this route itself. Those every route of its kind can answer are added
   * by the OpenAPI document (openapiErrors.ts): 401/429/503 with a token, 400/413 with a body,
   * 400 with a query, 500 always. Their statuses come from ERROR_STATUS.
   */
  errors?: readonly ErrorCode[];
  /** Headers that error answers of a status carry (an invocation's 500 names its run). */
  errorHeaders?: Readonly<Partial<Record<number, readonly ResponseHeaderName[]>>>;
  /** Schemas of path parameters whose name means something else here than in PATH_PARAMETERS. */
  params?: Readonly<Record<string, z.ZodType>>;
  /** False leaves the route out of the OpenAPI document (the dashboard's page and files are not API). */
  openapi?: false;
  /** Files the handler reads at run time, relative to the project root; bundled beside its Lambda's code. */
  files?: readonly string[];
  /** The handler reads deployed code on an analysis worker thread (lambdas/code/analysis), bundled beside its Lambda's code. */
  analyzesCode?: true;
  /** Request headers the route reads (schemas in REQUEST_HEADERS). */
  headers?: readonly RequestHeaderName[];
  /** The success body's content type when it is not JSON (e.g. `text/event-stream`). */
  contentType?: string;
  /**
   * False: on AWS the route is not behind the HTTP API's authorizer and the handler checks the
   * token itself (with the same Identity), so that its 401 carries the route's own headers: API
   * Gateway answers a request without a token on an authorized route itself (`/mcp` must send
   * `WWW-Authenticate`). Only with `auth: true`.
   */
  gatewayAuthorizer?: false;
}
