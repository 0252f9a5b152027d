import { errorResult } from "../http/errorBody";
import { ApiError } from "../http/errors";
import type { HttpResult } from "../http/response";

/**
 * Lambda's limit on a synchronous answer: the handler's return value as Lambda serializes it
 * (JSON: the body is a string in it, every quote and backslash escaped). Past it, API Gateway
 * answers its own 500 and the caller's retry may run the automation again.
 */
export const LAMBDA_RESPONSE_LIMIT_BYTES = 6 * 1024 * 1024;

/** Lambda's limit on a synchronous invocation's event (the same 6 MiB): API Gateway's event with the request body in it. */
export const LAMBDA_EVENT_LIMIT_BYTES = 6 * 1024 * 1024;

/** Bodies smaller than this are never re-encoded (escaping cannot take them near the limit). */
const REENCODE_FROM_BYTES = 1024 * 1024;

/** The bytes of a route's answer as Lambda serializes it. */
export function envelopeBytes(result: HttpResult): number {
  return Buffer.byteLength(JSON.stringify(result), "utf8");
}

/**
 * A route's answer made to fit Lambda's envelope. A large body whose JSON escaping would cost
 * more than base64 (a result full of quotes, backslashes or control characters: up to twice its
 * size escaped, against 4/3 in base64) is sent base64-encoded (`isBase64Encoded`: API Gateway
 * decodes it, the client gets the same bytes). An answer that still does not fit (a run recorded
 * before the inline cap was lowered) becomes the API's 500 `result_too_large` instead of API
 * Gateway's bare 500. The inline result cap (MAX_RESULT_BYTES) is chosen so that a run's result,
 * with its params, logs and errors, always fits (test/unit/lambdaEnvelope.test.ts).
 */
export function fitLambdaEnvelope(result: HttpResult, requestId: string): HttpResult {
  const body = result.body;
  if (typeof body !== "string" || result.isBase64Encoded === true) return checked(result, requestId);
  const raw = Buffer.byteLength(body, "utf8");
  if (raw < REENCODE_FROM_BYTES) return result;
  const escaped = Buffer.byteLength(JSON.stringify(body), "utf8") - 2;
  const base64 = 4 * Math.ceil(raw / 3);
  if (escaped <= base64) return checked(result, requestId);
  return checked({ ...result, body: Buffer.from(body, "utf8").toString("base64"), isBase64Encoded: true }, requestId);
}

function checked(result: HttpResult, requestId: string): HttpResult {
  const bytes = envelopeBytes(result);
  if (bytes <= LAMBDA_RESPONSE_LIMIT_BYTES) return result;
  const error = new ApiError(
    "result_too_large",
    `The answer is ${bytes} bytes as Lambda sends it, over its ${LAMBDA_RESPONSE_LIMIT_BYTES}-byte limit; large output belongs in artifacts`,
    { bytes, limit: LAMBDA_RESPONSE_LIMIT_BYTES },
  );
  return errorResult(error, requestId);
}
