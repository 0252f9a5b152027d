import { resolveFunction } from "../functions/resolveFunction";
import { defineRoute } from "../http/defineRoute";
import { ApiError } from "../http/errors";
import { noContent } from "../http/response";
import { PutSecretBody } from "../schemas/secretSchemas";
import { MAX_SECRETS_PER_FUNCTION, SECRET_NAME } from "../secrets/functionSecrets";
import { secretContext } from "../secrets/secretContexts";

/** The `{name}` of a secrets route: a valid secret name, or 400 invalid_name. */
export function secretName(name: string | undefined): string {
  if (name === undefined || !SECRET_NAME.test(name)) {
    throw new ApiError("invalid_name", "A secret's name is 1 to 64 characters of A-Z, 0-9 and _, starting with a letter (e.g. API_TOKEN)", {
      name: (name ?? "").slice(0, 100),
      pattern: SECRET_NAME.source,
    });
  }
  return name;
}

/** PUT /functions/{ref}/secrets/{name}: sets one secret of one of the caller's functions (sealed at rest). */
export const putSecret = defineRoute({ body: PutSecretBody }, async ({ params, principal, body }, deps) => {
  const name = secretName(params.name);
  const fn = await resolveFunction(deps.store, principal, params.ref ?? "");
  const sealed = await deps.secretBox.seal(body.value, secretContext(fn.function_id, name));
  // Noted on the record before the secret exists: a run that sees no note has no secret to get or redact.
  if (!fn.has_secrets && !(await deps.store.functions.markHasSecrets(fn))) {
    throw new ApiError("function_not_found", `No function named '${params.ref ?? ""}'`, { ref: params.ref ?? "" });
  }
  const stored = await deps.store.secrets.put(fn.function_id, { name, sealed, updated_at: deps.clock.now().toISOString() }, MAX_SECRETS_PER_FUNCTION);
  if (!stored) {
    throw new ApiError("invalid_request", `A function has at most ${MAX_SECRETS_PER_FUNCTION} secrets; remove one first`, { limit: MAX_SECRETS_PER_FUNCTION });
  }
  return noContent();
});
