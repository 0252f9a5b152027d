import type { RouteSpec } from "./routeSpec";
import { META_ROUTES } from "./specs/metaRoutes";
import { FUNCTION_ROUTES } from "./specs/functionRoutes";
import { INVOCATION_ROUTES } from "./specs/invocationRoutes";
import { RUN_ROUTES } from "./specs/runRoutes";
import { BATCH_ROUTES } from "./specs/batchRoutes";
import { SECRET_ROUTES } from "./specs/secretRoutes";
import { WEBHOOK_ROUTES } from "./specs/webhookRoutes";
import { ACCOUNT_ROUTES } from "./specs/accountRoutes";
import { MCP_ROUTES } from "./specs/mcpRoutes";
import { PROFILE_ROUTES } from "../profiles/profileRoutes";

export type { ApiTag, HttpMethod, OtherResponse, RouteSpec } from "./routeSpec";

/** Every route, by part of the API (each part in lambdas/routes/specs/): read by the OpenAPI document, the local server and the CDK stack. */
export const ROUTE_SPECS = [
  ...META_ROUTES,
  ...FUNCTION_ROUTES,
  ...INVOCATION_ROUTES,
  ...RUN_ROUTES,
  ...BATCH_ROUTES,
  ...SECRET_ROUTES,
  ...PROFILE_ROUTES,
  ...WEBHOOK_ROUTES,
  ...ACCOUNT_ROUTES,
  ...MCP_ROUTES,
] as const satisfies readonly RouteSpec[];

export type OperationId = (typeof ROUTE_SPECS)[number]["operationId"];
