/**
 * The dashboard's static files, served by `GET /dashboard/{file}`, with their content types.
 * They sit beside this module: in `lambdas/dashboard/` under tsx and jest, and in the root of
 * the route's Lambda bundle on AWS (the route specs list them as the Lambda's `files`).
 */
export const DASHBOARD_ASSETS = {
  "app.js": "text/javascript; charset=utf-8",
  "api.js": "text/javascript; charset=utf-8",
  "dom.js": "text/javascript; charset=utf-8",
  "functionsPage.js": "text/javascript; charset=utf-8",
  "functionPage.js": "text/javascript; charset=utf-8",
  "invokeForm.js": "text/javascript; charset=utf-8",
  "durationChart.js": "text/javascript; charset=utf-8",
  "usagePage.js": "text/javascript; charset=utf-8",
  "app.css": "text/css; charset=utf-8",
  "icon.svg": "image/svg+xml",
} as const;

export type DashboardAsset = keyof typeof DASHBOARD_ASSETS;

/** The page itself (`GET /`), a template with the API's base path in it. */
export const DASHBOARD_PAGE = "index.html";

/** Every file the dashboard routes read, relative to the project root (bundled with their Lambdas). */
export const DASHBOARD_FILES = [DASHBOARD_PAGE, ...Object.keys(DASHBOARD_ASSETS)].map((file) => `lambdas/dashboard/${file}`);

/**
 * What the page may load and run: its own files only, and requests to its own origin (the API).
 * No inline script or style, no framing, no plugins, no other origin.
 */
export const DASHBOARD_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self'",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join("; ");

/** Headers every dashboard response carries. */
export const DASHBOARD_HEADERS = {
  "content-security-policy": DASHBOARD_CSP,
  "x-content-type-options": "nosniff",
  "referrer-policy": "no-referrer",
  "cache-control": "no-cache",
};

export function isDashboardAsset(name: string): name is DashboardAsset {
  return Object.hasOwn(DASHBOARD_ASSETS, name);
}
