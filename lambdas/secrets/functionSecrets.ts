import type { Store } from "../store/store";
import type { SecretBox } from "./secretBox";
import type { InvokeResult, RunSecrets } from "../runtime/runtime";
import { Redactor } from "./redactor";
import { secretContext } from "./secretContexts";

/** A secret's name (shared/API.md). */
export const SECRET_NAME = /^[A-Z][A-Z0-9_]{0,63}$/;
/** At most this many secrets per function. */
export const MAX_SECRETS_PER_FUNCTION = 50;
/** A secret's value is 1 to this many bytes of UTF-8 (KMS encrypts at most 4 KB directly). */
export const MAX_SECRET_VALUE_BYTES = 4096;
/**
 * …and at least this many: a value is redacted wherever it occurs in a run's output (inside
 * words, numbers and object keys too), so a shorter one would mangle ordinary results.
 */
export const MIN_SECRET_VALUE_BYTES = 4;

/** Where secrets are kept, and what opens them. */
export interface SecretsDeps {
  store: Pick<Store, "secrets">;
  secretBox: SecretBox;
}

/** The function's secrets for one run: read with one store call, each opened (in parallel). */
export async function secretsForRun(deps: SecretsDeps, functionId: string, hasSecrets = true): Promise<RunSecrets> {
  if (!hasSecrets) return { values: {}, sealed: [] };
  const sealed = await deps.store.secrets.list(functionId);
  if (sealed.length === 0) return { values: {}, sealed };
  const opened = await Promise.all(sealed.map(async (secret) => [secret.name, await deps.secretBox.open(secret.sealed, secretContext(functionId, secret.name))] as const));
  return { values: Object.fromEntries(opened), sealed };
}

/** What redacts the function's secret values (from an outcome its run sent). */
export async function redactorFor(deps: SecretsDeps, functionId: string): Promise<Redactor> {
  return new Redactor(Object.values((await secretsForRun(deps, functionId)).values));
}

/** How a run ended, with the function's secret values out of its result, logs and error. */
export function redactResult(redactor: Redactor, result: InvokeResult): InvokeResult {
  if (redactor.empty) return result;
  const { error } = result;
  return {
    ...result,
    result_json: result.result_json === null ? null : redactor.json(result.result_json),
    logs: redactor.text(result.logs),
    error: error === null ? null : { ...error, message: redactor.text(error.message), ...(error.stack === undefined ? {} : { stack: redactor.text(error.stack) }) },
  };
}
