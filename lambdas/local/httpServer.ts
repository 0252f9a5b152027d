import { randomUUID } from "node:crypto";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { Deps } from "../deps";
import { errorResult } from "../http/errorBody";
import { ApiError } from "../http/errors";
import type { HttpResult } from "../http/response";
import type { Route } from "../routes/routeTable";
import { lambdaContext } from "./lambdaContext";
import { createRouteMatcher } from "./routeMatcher";
import { toApiGatewayEvent } from "./toApiGatewayEvent";

/**
 * The local HTTP front door: what API Gateway does on AWS. Each request becomes an
 * API Gateway v2 event for the same handler the route's Lambda runs.
 */
export function createHttpServer(routes: Route[], deps: Deps, requestLog: ((line: string) => void) | null): Server {
  const match = createRouteMatcher(routes);
  const handlers = new Map(routes.map((route) => [route, route.handler(deps)]));

  async function respond(request: IncomingMessage, requestId: string): Promise<HttpResult> {
    const method = request.method ?? "GET";
    const path = new URL(request.url ?? "/", "http://localhost").pathname;
    const found = match(method, path);
    if (found.kind === "not_found") {
      throw new ApiError("route_not_found", `No route for ${method} ${path}`, { method, path });
    }
    if (found.kind === "wrong_method") {
      throw new ApiError("method_not_allowed", `${method} is not allowed on ${path}`, { allowed: found.allowed }, {
        allow: found.allowed.join(", "),
      });
    }
    const body = await readBody(request, deps.config.maxBodyBytes);
    const { route, params } = found;
    const event = toApiGatewayEvent({
      request,
      requestId,
      routeKey: `${route.method} ${route.path}`,
      params,
      body,
      now: deps.clock.now(),
    });
    const handler = handlers.get(route);
    if (!handler) throw new Error(`No handler for ${route.operationId}`);
    return handler(event, lambdaContext(route.operationId, requestId));
  }

  return createServer((request, response) => {
    const started = performance.now();
    const requestId = randomUUID();
    respond(request, requestId)
      .catch((error: unknown) => errorResult(error, requestId, deps.log))
      .then((result) => {
        send(response, result, requestId);
        if (requestLog) requestLog(logLine(request, result.statusCode, performance.now() - started, requestId));
      });
  });
}

/** Reads the body as UTF-8 up to `limit` bytes; past it, 413 without reading the rest. */
function readBody(request: IncomingMessage, limit: number): Promise<string> {
  return new Promise((resolve, reject) => {
    const declared = Number(request.headers["content-length"] ?? 0);
    if (declared > limit) {
      request.resume();
      reject(new ApiError("payload_too_large", `Body is ${declared} bytes; the limit is ${limit}`));
      return;
    }
    const chunks: Buffer[] = [];
    let size = 0;
    request.on("data", (chunk: Buffer) => {
      size += chunk.length;
      if (size > limit) {
        request.removeAllListeners("data");
        request.resume();
        reject(new ApiError("payload_too_large", `Body is over the limit of ${limit} bytes`));
        return;
      }
      chunks.push(chunk);
    });
    request.on("end", () => resolve(Buffer.concat(chunks).toString("utf8")));
    request.on("error", reject);
  });
}

function send(response: ServerResponse, result: HttpResult, requestId: string): void {
  const headers: Record<string, string> = { "x-request-id": requestId };
  for (const [name, value] of Object.entries(result.headers ?? {})) headers[name] = String(value);
  const body = result.isBase64Encoded && result.body ? Buffer.from(result.body, "base64") : (result.body ?? "");
  response.writeHead(result.statusCode, headers);
  response.end(body);
}

/** One line per request; never headers (they carry tokens), never bodies. */
function logLine(request: IncomingMessage, status: number, ms: number, requestId: string): string {
  const path = new URL(request.url ?? "/", "http://localhost").pathname;
  const extras = ["x-service-request-origin", "x-service-sdk-version"]
    .map((name) => [name, request.headers[name]] as const)
    .filter(([, value]) => typeof value === "string" && value !== "")
    .map(([name, value]) => ` ${name.replace("x-service-", "")}=${JSON.stringify(value)}`)
    .join("");
  return `${new Date().toISOString()} ${request.method} ${path} ${status} ${ms.toFixed(1)}ms request_id=${requestId}${extras}`;
}
