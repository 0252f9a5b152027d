import { resolveFunction } from "../functions/resolveFunction";
import { defineRoute } from "../http/defineRoute";
import { ApiError } from "../http/errors";
import { noContent } from "../http/response";
import { secretName } from "./putSecret";

/** DELETE /functions/{ref}/secrets/{name}: removes one secret (404 secret_not_found when there is none of that name). */
export const deleteSecret = defineRoute({}, async ({ params, principal }, deps) => {
  const name = secretName(params.name);
  const fn = await resolveFunction(deps.store, principal, params.ref ?? "");
  if (!(await deps.store.secrets.remove(fn.function_id, name))) {
    throw new ApiError("secret_not_found", `The function '${fn.name}' has no secret named '${name}'`, { name });
  }
  return noContent();
});
