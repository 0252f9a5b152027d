import { DASHBOARD_ASSETS, DASHBOARD_HEADERS, REPLAY_CSP, isDashboardAsset } from "../dashboard/dashboardAssets";
import { createDashboardFiles } from "../dashboard/dashboardFiles";
import { defineRoute, type RouteFactory } from "../http/defineRoute";
import { ApiError } from "../http/errors";
import { text } from "../http/response";

/** GET /dashboard/{file}: one of the dashboard's scripts, its stylesheet or its icon (open), with an ETag. */
export const dashboardAsset: RouteFactory = (deps) => {
  const files = createDashboardFiles();
  return defineRoute({ auth: false }, async ({ params, headers }) => {
    const name = params.file ?? "";
    if (!isDashboardAsset(name)) {
      throw new ApiError("route_not_found", `No dashboard file '${name}'`, { method: "GET", path: `/dashboard/${name}` });
    }
    const file = await files(name);
    // The replay frame is framed by the run page, under a policy of its own (REPLAY_CSP).
    const policy = name === "replay.html" ? { "content-security-policy": REPLAY_CSP } : {};
    const cacheHeaders = { ...DASHBOARD_HEADERS, ...policy, etag: file.etag };
    if (headers["if-none-match"] === file.etag) return { statusCode: 304, headers: cacheHeaders, body: "" };
    return text(200, file.body, DASHBOARD_ASSETS[name], cacheHeaders);
  })(deps);
};
