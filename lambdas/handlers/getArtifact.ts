import { defineRoute } from "../http/defineRoute";
import { ApiError } from "../http/errors";
import type { HttpResult } from "../http/response";
import { ownRun } from "../runs/ownRun";

/**
 * GET /runs/{run_id}/artifacts/{name}: one artifact of one of the account's runs: its bytes with
 * its content type (locally), or a 302 to a short-lived download URL (on AWS). Served as an
 * attachment, never rendered as a page of the API's origin (it is whatever a run saved).
 */
export const getArtifact = defineRoute({}, async ({ params, principal }, deps): Promise<HttpResult> => {
  const run = await ownRun(deps, principal, params.run_id ?? "");
  const name = params.name ?? "";
  const item = await deps.store.artifacts.get(run.run_id, name, deps.clock.now());
  const content = item ? await deps.artifactContent?.open(item) : null;
  if (!item || !content) throw new ApiError("artifact_not_found", `Run ${run.run_id} has no artifact '${name.slice(0, 140)}'`, { run_id: run.run_id, name: name.slice(0, 140) });
  const safety = {
    "content-disposition": `attachment; filename="${item.name}"`,
    "x-content-type-options": "nosniff",
    "content-security-policy": "sandbox; default-src 'none'",
    "cache-control": "private, max-age=60",
  };
  if ("redirect" in content) return { statusCode: 302, headers: { location: content.redirect, "cache-control": "no-store" }, body: "" };
  return {
    statusCode: 200,
    headers: { "content-type": item.content_type, ...safety },
    body: Buffer.from(content.bytes).toString("base64"),
    isBase64Encoded: true,
  };
});
