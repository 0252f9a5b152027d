import { z } from "zod";

/** Request headers the routes read; every one is optional. */
export const REQUEST_HEADERS = {
  "Idempotency-Key": z
    .string()
    .min(1)
    .max(255)
    .describe("Within 24 h the same key with the same request starts no second run (the answer is replayed with Idempotent-Replayed: true); with another request, 422 idempotency_key_reused"),
  Prefer: z.string().describe("respond-async: answer 202 as soon as the run is recorded"),
  "X-Function-Version": z.string().regex(/^[1-9][0-9]{0,8}$/).describe("Run this version instead of the latest (404 version_not_found if it has none such)"),
  "Last-Event-ID": z.string().describe("The id of the last event received: the stream resumes after it (`/events`: 204 once the run's end was delivered; `/live` on AWS: only a newer frame comes)"),
  Accept: z.string().describe("Must list both application/json and text/event-stream (the answer is application/json)"),
  "Mcp-Protocol-Version": z.string().describe("The protocol version negotiated by initialize, on every later request"),
  // Any request may carry these two (the local request log shows them); a run keeps them.
  "x-service-request-origin": z.string().describe("Free text naming where the request comes from (e.g. browserfn-cli); kept with the run it starts"),
  "x-service-sdk-version": z.string().describe("Free text naming the client and its version (e.g. browserfn-client/0.1.0); kept with the run it starts"),
} as const satisfies Record<string, z.ZodType>;

export type RequestHeaderName = keyof typeof REQUEST_HEADERS;

/** Response headers the documented answers carry. */
export const RESPONSE_HEADERS = {
  "X-Request-Id": z.string().describe("This request's id (also error.request_id); on every answer"),
  "X-Run-Id": z.string().describe("The run's id: GET /runs/{run_id}"),
  "X-Function-Version": z.string().describe("The version that ran"),
  "X-Duration-Ms": z.int().min(0).describe("How long the run took, in ms"),
  "Idempotent-Replayed": z.literal("true").describe("Present when the answer is that of an earlier request with the same Idempotency-Key"),
  Location: z.string().describe("Where the created or started resource is"),
  "Retry-After": z.int().min(0).describe("Seconds to wait before trying again"),
  "WWW-Authenticate": z.string().describe("Bearer, with resource_metadata naming /.well-known/oauth-protected-resource (RFC 9728)"),
  "Content-Disposition": z.string().describe("attachment; filename=\"<name>\""),
} as const satisfies Record<string, z.ZodType>;

export type ResponseHeaderName = keyof typeof RESPONSE_HEADERS;
