import { DASHBOARD_HEADERS, DASHBOARD_PAGE, dashboardCsp } from "../dashboard/dashboardAssets";
import { createDashboardFiles } from "../dashboard/dashboardFiles";
import { renderPage } from "../dashboard/renderPage";
import { defineRoute, type RouteFactory } from "../http/defineRoute";
import { text } from "../http/response";

/**
 * GET /: the web dashboard's page (open: it holds no data; the page signs in with an API key
 * it keeps in the browser and calls the API with it). Strict Content-Security-Policy: its own
 * files only, and (on AWS) the run bucket, where artifact downloads are redirected.
 */
export const dashboard: RouteFactory = (deps) => {
  const files = createDashboardFiles();
  return defineRoute({ auth: false }, async ({ baseUrl }) => {
    const page = await files(DASHBOARD_PAGE);
    const csp = dashboardCsp(deps.config.artifactOrigins ?? []);
    return text(200, renderPage(page.body, baseUrl), "text/html; charset=utf-8", { ...DASHBOARD_HEADERS, "content-security-policy": csp });
  })(deps);
};
