import { resolveFunction } from "../functions/resolveFunction";
import { defineRoute } from "../http/defineRoute";
import { ApiError } from "../http/errors";
import { json } from "../http/response";

/** GET /functions/{ref}/versions/{version}: one version with its source code. */
export const getVersion = defineRoute({}, async ({ params, principal }, deps) => {
  const fn = await resolveFunction(deps.store, principal, params.ref ?? "");
  const wanted = params.version ?? "";
  const number = /^[1-9]\d{0,8}$/.test(wanted) ? Number(wanted) : 0;
  const version = number > 0 ? await deps.store.versions.get(fn.function_id, number) : undefined;
  if (!version) {
    throw new ApiError("version_not_found", `Function '${fn.name}' has no version '${wanted}'`, {
      version: wanted,
      latest_version: String(fn.latest_version),
    });
  }
  return json(200, {
    version: String(version.version),
    created_at: version.created_at,
    code_sha256: version.code_sha256,
    variables: version.variables,
    code: version.source,
  });
});
