import { randomUUID } from "node:crypto";
import { createServer, type IncomingMessage, type Server, type ServerOptions, type ServerResponse, STATUS_CODES } from "node:http";
import type { Duplex } from "node:stream";
import type { Deps } from "../deps";
import { errorResult } from "../http/errorBody";
import { ApiError } from "../http/errors";
import { redactSecrets } from "../http/redactSecrets";
import type { HttpResult } from "../http/response";
import { isStreaming } from "../http/streamBody";
import type { Route } from "../routes/routeTable";
import { lambdaContext, localHandlerTimeoutMs } from "./lambdaContext";
import { OpenStreams } from "./openStreams";
import { createRouteMatcher } from "./routeMatcher";
import { sendStream } from "./sendStream";
import { toApiGatewayEvent } from "./toApiGatewayEvent";
import { authenticateHead } from "./requestGuards/authenticateHead";
import { capConnectionsPerClient } from "./requestGuards/clientConnections";
import { readBody } from "./requestGuards/readBody";
import { type ConnectionGuards, DEFAULT_CONNECTION_GUARDS, REFUSAL_PACING } from "./requestGuards/connectionGuards";
import { clientAddress, createRefusalPacing } from "./requestGuards/refusalPacing";

/** How many event streams one account may hold open at once, unless the service says otherwise. */
export const DEFAULT_STREAMS_PER_ACCOUNT = 20;

/** Routes that are always a deploy (an update is one only with code, which its body says): refused on the head when the account's deploys are used up. */
const DEPLOYS_BY_HEAD = new Set(["createFunction", "forkFunction"]);

/**
 * The local HTTP front door: what API Gateway does on AWS. Each request becomes an
 * API Gateway v2 event for the same handler the route's Lambda runs.
 */
export function createHttpServer(
  routes: Route[],
  deps: Deps,
  requestLog: ((line: string) => void) | null,
  /** Node's timeouts for a slow request (its defaults unless given: head 60 s, whole request 300 s). */
  timeouts: Pick<ServerOptions, "headersTimeout" | "requestTimeout" | "connectionsCheckingInterval"> = {},
  /** The streamed responses (event streams) it holds open: capped per account, ended when the service stops. */
  streams: OpenStreams = new OpenStreams(DEFAULT_STREAMS_PER_ACCOUNT),
  guards: ConnectionGuards = DEFAULT_CONNECTION_GUARDS,
): Server {
  const match = createRouteMatcher(routes);
  const handlers = new Map(routes.map((route) => [route, route.handler(deps)]));
  const pacing = createRefusalPacing(REFUSAL_PACING);

  /** Requests whose body was left unread (their token was refused, or the body stalled): their connection closes after the answer. */
  const unread = new WeakSet<IncomingMessage>();

  async function respond(request: IncomingMessage, url: URL | null, requestId: string): Promise<HttpResult> {
    const method = request.method ?? "GET";
    if (!url) throw new ApiError("invalid_request", "The request target must be a path such as /functions");
    if (request.httpVersion === "1.1" && request.headers.host === undefined) {
      throw new ApiError("invalid_request", "An HTTP/1.1 request needs a Host header");
    }
    const path = url.pathname;
    const found = match(method, path);
    if (found.kind === "not_found") {
      throw new ApiError("route_not_found", `No route for ${method} ${path}`, { method, path });
    }
    if (found.kind === "wrong_method") {
      throw new ApiError("method_not_allowed", `${method} is not allowed on ${path}`, { allowed: found.allowed }, {
        allow: found.allowed.join(", "),
      });
    }
    const { route, params } = found;
    // The token is checked on the head, before any of the body is read: a refused caller's body never is.
    const verdict = await authenticateHead(request, route.auth, deps.identity);
    // A deploy its account may not make now is refused on its head too: its body (up to 256 KB) is never read.
    const account = verdict.context && "account_id" in verdict.context ? verdict.context.account_id : undefined;
    if (verdict.readBody && typeof account === "string" && DEPLOYS_BY_HEAD.has(route.operationId)) {
      try {
        deps.deployLimiter?.check(account);
      } catch (error) {
        unread.add(request);
        throw error;
      }
    }
    if (!verdict.readBody) {
      unread.add(request);
      await pacing.wait(clientAddress(request.socket.remoteAddress));
    }
    const body = verdict.readBody ? await readBody(request, deps.config.maxBodyBytes, guards.bodyIdleMs).catch(closeAfter(request)) : "";
    const event = toApiGatewayEvent({
      request,
      url,
      requestId,
      routeKey: `${route.method} ${route.path}`,
      params,
      body,
      now: deps.clock.now(),
      authorizer: verdict.context,
    });
    const handler = handlers.get(route);
    if (!handler) throw new Error(`No handler for ${route.operationId}`);
    return handler(event, lambdaContext(route.operationId, requestId, localHandlerTimeoutMs(deps.config.syncWaitSeconds)));
  }

  /** A body that stalled is not read on: its connection closes after the answer. */
  function closeAfter(request: IncomingMessage) {
    return (error: unknown): never => {
      if (error instanceof ApiError && error.code === "request_timeout") unread.add(request);
      throw error;
    };
  }

  // Node's own Host check answers a bare 400; the handler answers it in the API's shape instead.
  /** The response each connection is answering now, for parse errors that come meanwhile. */
  const answering = new WeakMap<Duplex, ServerResponse>();
  const server = createServer({ ...timeouts, requireHostHeader: false }, (request, response) => {
    if (refused(request.socket)) return;
    const started = performance.now();
    answering.set(request.socket, response);
    const requestId = randomUUID();
    const url = requestUrl(request.url);
    respond(request, url, requestId)
      .catch((error: unknown) => errorResult(error, requestId, deps.log))
      .then(async (result) => {
        // An event stream is written as it comes; its line is logged when it ends.
        let status = result.statusCode;
        // The unread rest of a body is not waited for: the connection ends with this answer.
        if (unread.has(request)) response.shouldKeepAlive = false;
        if (isStreaming(result)) status = await sendStream(response, result, requestId, streams, deps.log, send);
        else send(response, result, requestId);
        if (requestLog) requestLog(logLine(request, url, status, performance.now() - started, requestId));
      })
      .catch((error: unknown) => {
        // Never let one request take the process down; the answer may be half sent already.
        deps.log(`[${requestId}] internal error while answering: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
        response.destroy();
      });
  });
  const refused = capConnectionsPerClient(server, guards.maxConnectionsPerClient, () => refusal(deps));
  server.on("clientError", (error: NodeJS.ErrnoException, socket: Duplex) =>
    refused(socket) ? socket.destroy() : answerClientError(error, socket, answering.get(socket), deps, requestLog),
  );
  return server;
}

/**
 * A request Node's HTTP parser refused (malformed, headers over 16 KB, too slow) gets the
 * API's JSON error too, not Node's bare status line.
 */
function answerClientError(
  error: NodeJS.ErrnoException,
  socket: Duplex,
  inProgress: ServerResponse | undefined,
  deps: Deps,
  requestLog: ((line: string) => void) | null,
): void {
  if (!socket.writable || error.code === "ECONNRESET") {
    socket.destroy();
    return;
  }
  if (inProgress && !inProgress.writableFinished) {
    if (inProgress.req.complete) {
      // A request before this one is still being answered: answers go out in order.
      inProgress.once("finish", () => answerClientError(error, socket, undefined, deps, requestLog));
      inProgress.once("close", () => inProgress.writableFinished || socket.destroy());
      return;
    }
    // The error is in the body of the request in progress: answer it now, unless its head is out.
    if (inProgress.headersSent) {
      socket.destroy();
      return;
    }
  }
  const requestId = randomUUID();
  const apiError =
    error.code === "HPE_HEADER_OVERFLOW"
      ? new ApiError("headers_too_large", "The request's headers are over the limit of 16 KB")
      : error.code === "HPE_CHUNK_EXTENSIONS_OVERFLOW"
        ? new ApiError("payload_too_large", "The request's chunk extensions are too large")
        : error.code === "ERR_HTTP_REQUEST_TIMEOUT"
          ? new ApiError("request_timeout", "The request did not arrive in time")
          : new ApiError("invalid_request", `Malformed HTTP request (${error.code ?? "parse error"})`);
  const result = errorResult(apiError, requestId, deps.log);
  socket.end(rawAnswer(result));
  if (requestLog) requestLog(`${new Date().toISOString()} - - ${result.statusCode} request_id=${requestId}`);
}

/**
 * The request target as a URL: origin form (`/functions?limit=5`) or absolute form
 * (`http://host/functions`); null for anything else (`*`, an authority, a malformed URL).
 */
function requestUrl(target: string | undefined): URL | null {
  try {
    if (target?.startsWith("/")) return new URL(`http://localhost${target}`);
    if (target && /^https?:\/\//i.test(target)) return new URL(target);
  } catch {
    // not a URL
  }
  return null;
}

/** The answer of a connection past its client's cap (429 `too_many_connections`), as raw HTTP. */
function refusal(deps: Deps): string {
  const apiError = new ApiError("too_many_connections", "This client address holds too many open connections; close some and retry", {}, { "retry-after": "1" });
  return rawAnswer(errorResult(apiError, randomUUID(), deps.log));
}

/** A whole HTTP/1.1 answer that closes its connection. */
function rawAnswer(result: HttpResult): string {
  const body = result.body ?? "";
  const head = [
    `HTTP/1.1 ${result.statusCode} ${STATUS_CODES[result.statusCode] ?? ""}`,
    ...Object.entries(result.headers ?? {}).map(([name, value]) => `${name}: ${String(value)}`),
    `content-length: ${Buffer.byteLength(body)}`,
    "connection: close",
  ];
  return `${head.join("\r\n")}\r\n\r\n${body}`;
}

function send(response: ServerResponse, result: HttpResult, requestId: string): void {
  const headers: Record<string, string> = { "x-request-id": requestId };
  for (const [name, value] of Object.entries(result.headers ?? {})) headers[name] = String(value);
  const body = result.isBase64Encoded && result.body ? Buffer.from(result.body, "base64") : (result.body ?? "");
  response.writeHead(result.statusCode, headers);
  response.end(body);
}

/**
 * One line per request; never headers (they carry tokens), bodies or query strings, and a key
 * or token put in the path (`DELETE /api-keys/bfn_…` instead of the key id) is redacted.
 */
function logLine(request: IncomingMessage, url: URL | null, status: number, ms: number, requestId: string): string {
  const path = redactSecrets(url?.pathname ?? "-");
  const extras = ["x-service-request-origin", "x-service-sdk-version"]
    .map((name) => [name, request.headers[name]] as const)
    .filter(([, value]) => typeof value === "string" && value !== "")
    .map(([name, value]) => ` ${name.replace("x-service-", "")}=${JSON.stringify(redactSecrets(String(value)))}`)
    .join("");
  return `${new Date().toISOString()} ${request.method} ${path} ${status} ${ms.toFixed(1)}ms request_id=${requestId}${extras}`;
}
