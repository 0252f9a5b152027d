import type { APIGatewayProxyEventV2 } from "aws-lambda";
import type { HttpResult } from "../http/response";

/**
 * The request headers the MCP transport reads, and nothing else: the bearer token and the
 * rest stay out of what the SDK sees and hands its handlers.
 */
const TRANSPORT_HEADERS = ["accept", "content-type", "mcp-protocol-version", "mcp-session-id"] as const;

/**
 * An API Gateway v2 event (the local server makes the same) as the web-standard Request the
 * SDK's Streamable HTTP transport takes: method, the endpoint's URL, the headers it reads, the body.
 */
export function toWebRequest(event: APIGatewayProxyEventV2, url: string): Request {
  const headers = new Headers();
  for (const name of TRANSPORT_HEADERS) {
    const value = event.headers?.[name];
    if (value !== undefined) headers.set(name, value);
  }
  const method = event.requestContext.http.method;
  const hasBody = method !== "GET" && method !== "HEAD" && event.body !== undefined && event.body !== "";
  const body = hasBody ? (event.isBase64Encoded ? Buffer.from(event.body ?? "", "base64") : event.body) : null;
  return new Request(url, { method, headers, body });
}

/** The transport's web-standard Response as the handler's buffered answer (API Gateway takes it whole). */
export async function toHttpResult(response: Response): Promise<HttpResult> {
  const headers: Record<string, string> = {};
  response.headers.forEach((value, name) => {
    headers[name] = value;
  });
  return { statusCode: response.status, headers, body: await response.text() };
}
