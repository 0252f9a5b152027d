import type { APIGatewayProxyEventV2 } from "aws-lambda";
import { errorResult } from "../http/errorBody";
import { ApiError } from "../http/errors";
import type { HttpResult } from "../http/response";
import { createRouteMatcher } from "../local/routeMatcher";
import type { Route } from "../routes/routeTable";
import { ROUTE_SPECS } from "../routes/routeSpecs";

const unreachable = () => {
  throw new Error("the $default route never runs a route's handler");
};

/**
 * The HTTP API's `$default` route: what no route matched. API Gateway would answer its own
 * `{"message":"Not Found"}`; this answers the API's JSON error instead, 404 `route_not_found`
 * or 405 `method_not_allowed` with `Allow`, exactly as the local server does. Built from the
 * route specs (not the handlers), so this Lambda bundles no handler code.
 */
export function makeRouteNotFound(): (event: APIGatewayProxyEventV2) => Promise<HttpResult> {
  const match = createRouteMatcher(ROUTE_SPECS.map((spec): Route => ({ ...spec, handler: unreachable })));
  return async (event) => {
    const method = event.requestContext.http.method;
    const path = stripStage(event.rawPath, event.requestContext.stage);
    const found = match(method, path);
    const error =
      found.kind === "wrong_method"
        ? new ApiError("method_not_allowed", `${method} is not allowed on ${path}`, { allowed: found.allowed }, {
            allow: found.allowed.join(", "),
          })
        : new ApiError("route_not_found", `No route for ${method} ${path}`, { method, path });
    return errorResult(error, event.requestContext.requestId);
  };
}

/** With a named stage, rawPath starts with `/<stage>`; routes are matched without it. */
function stripStage(rawPath: string, stage: string): string {
  if (!stage || stage === "$default") return rawPath;
  const prefix = `/${stage}`;
  return rawPath === prefix ? "/" : rawPath.startsWith(`${prefix}/`) ? rawPath.slice(prefix.length) : rawPath;
}
