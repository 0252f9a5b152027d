import { defineRoute } from "../http/defineRoute";
import { json } from "../http/response";
import { artifactUrl, ownRun } from "../runs/ownRun";

/** GET /runs/{run_id}/artifacts: the files one of the account's runs kept, in name order. */
export const listArtifacts = defineRoute({}, async ({ params, principal, baseUrl }, deps) => {
  const run = await ownRun(deps, principal, params.run_id ?? "");
  const items = await deps.store.artifacts.list(run.run_id, deps.clock.now());
  return json(200, {
    items: items.map((item) => ({
      name: item.name,
      content_type: item.content_type,
      bytes: item.bytes,
      created_at: item.created_at,
      attempt: item.attempt ?? 1,
      url: artifactUrl(baseUrl, run.run_id, item.name),
    })),
  });
});
