import { resolveFunction } from "../functions/resolveFunction";
import { defineRoute } from "../http/defineRoute";
import { json } from "../http/response";

/** GET /functions/{ref}/versions: every version, oldest first. */
export const listVersions = defineRoute({}, async ({ params, principal }, deps) => {
  const fn = await resolveFunction(deps.store, principal, params.ref ?? "");
  const versions = await deps.store.versions.list(fn.function_id);
  return json(200, {
    items: versions.map((v) => ({
      version: String(v.version),
      created_at: v.created_at,
      code_sha256: v.code_sha256,
      variables: v.variables,
    })),
  });
});
