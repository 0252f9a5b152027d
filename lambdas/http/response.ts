import type { APIGatewayProxyStructuredResultV2 } from "aws-lambda";

export type HttpResult = APIGatewayProxyStructuredResultV2 & { statusCode: number };

/** A JSON response. */
export function json(statusCode: number, body: unknown, headers: Record<string, string> = {}): HttpResult {
  return {
    statusCode,
    headers: { "content-type": "application/json; charset=utf-8", ...headers },
    body: JSON.stringify(body),
  };
}

/** A non-JSON response (an HTML page, a script, a stylesheet) of the given content type. */
export function text(statusCode: number, body: string, contentType: string, headers: Record<string, string> = {}): HttpResult {
  return { statusCode, headers: { "content-type": contentType, ...headers }, body };
}

export function noContent(): HttpResult {
  return { statusCode: 204, headers: {}, body: "" };
}
