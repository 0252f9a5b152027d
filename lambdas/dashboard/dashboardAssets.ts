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
  "runPage.js": "text/javascript; charset=utf-8",
  "runsPage.js": "text/javascript; charset=utf-8",
  "runEvents.js": "text/javascript; charset=utf-8",
  "runResult.js": "text/javascript; charset=utf-8",
  "runError.js": "text/javascript; charset=utf-8",
  "artifactList.js": "text/javascript; charset=utf-8",
  "imageStrings.js": "text/javascript; charset=utf-8",
  "secretParams.js": "text/javascript; charset=utf-8",
  "pageLifetime.js": "text/javascript; charset=utf-8",
  "invokeForm.js": "text/javascript; charset=utf-8",
  "secretList.js": "text/javascript; charset=utf-8",
  "schemaFields.js": "text/javascript; charset=utf-8",
  "durationChart.js": "text/javascript; charset=utf-8",
  "usagePage.js": "text/javascript; charset=utf-8",
  "replayView.js": "text/javascript; charset=utf-8",
  "liveView.js": "text/javascript; charset=utf-8",
  "rrwebPlayer.js": "text/javascript; charset=utf-8",
  "rrwebPlayer.css": "text/css; charset=utf-8",
  "replay.html": "text/html; charset=utf-8",
  "replayFrame.js": "text/javascript; charset=utf-8",
  "profilesPage.js": "text/javascript; charset=utf-8",
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
 * No inline script or style, no framing, no other origin. Images and PDFs may come from blob:
 * URLs, which only the page itself can make: the run page shows artifacts and image results
 * through them, after fetching the bytes with the API key.
 *
 * `artifactOrigins` are origins an artifact download may be redirected to (on AWS, the S3
 * origin of the presigned URLs `GET /runs/{id}/artifacts/{name}` answers with), which the page
 * must then be allowed to fetch from, e.g. `https://<bucket>.s3.<region>.amazonaws.com`.
 */
export function dashboardCsp(artifactOrigins: readonly string[] = []): string {
  return [
    "default-src 'none'",
    "script-src 'self'",
    "style-src 'self'",
    "img-src 'self' blob:",
    "object-src blob:",
    ["connect-src 'self'", ...artifactOrigins].join(" "),
    // The replay player (replay.html), in a frame of its own: see REPLAY_CSP.
    "frame-src 'self'",
    "base-uri 'none'",
    "form-action 'none'",
    "frame-ancestors 'none'",
  ].join("; ");
}

/** The policy with no artifact origin (local mode: artifacts are served by the API itself). */
export const DASHBOARD_CSP = dashboardCsp();

/**
 * The replay frame's policy (`replay.html`, framed by the run page; not sandboxed: rrweb's player
 * writes the rebuilt page into a frame of its own, which needs the same origin). A recording rebuilds
 * the recorded page's DOM, whose styles are inline: they may apply here, and nothing else is
 * relaxed. Scripts are the service's own files only (no inline script, no event-handler
 * attribute of a recorded page runs); images only blob: and data: (what the recording holds
 * inline), so the recorded page's images, fonts and links are never fetched; nothing may connect.
 */
export const REPLAY_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' blob: data:",
  "font-src data:",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'self'",
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
