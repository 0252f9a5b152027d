import { DASHBOARD_FILES } from "../../dashboard/dashboardAssets";
import { Health, OpenApiDocument } from "../../schemas/metaSchemas";
import type { RouteSpec } from "../routeSpec";

/** The open routes: health, this document, the dashboard's page and files. */
export const META_ROUTES = [
  { operationId: "health", method: "GET", path: "/health", summary: "Liveness", tag: "meta", auth: false, status: 200, response: Health },
  {
    operationId: "openapi",
    method: "GET",
    path: "/openapi.json",
    summary: "This OpenAPI 3.1 document",
    tag: "meta",
    auth: false,
    status: 200,
    response: OpenApiDocument,
  },
  { operationId: "dashboard", method: "GET", path: "/", summary: "The web dashboard (HTML)", tag: "meta", auth: false, status: 200, openapi: false, files: DASHBOARD_FILES },
  {
    operationId: "dashboardAsset",
    method: "GET",
    path: "/dashboard/{file}",
    summary: "One of the web dashboard's scripts, its stylesheet or its icon",
    tag: "meta",
    auth: false,
    status: 200,
    openapi: false,
    files: DASHBOARD_FILES,
  },
] as const satisfies readonly RouteSpec[];
