import type { SealContext } from "./secretBox";

/** The encryption-context key naming the function a value belongs to (every sealed value has it). */
export const SECRET_CONTEXT_KEY = "function_id";
/** The encryption-context key naming who may open a run's copy of a secret (AWS: the function's Lambda session). */
export const RUNNER_CONTEXT_KEY = "runner";

/** What a function's secret `name` is sealed for at rest. */
export function secretContext(functionId: string, name: string): SealContext {
  return { [SECRET_CONTEXT_KEY]: functionId, secret: name };
}

/** What a function's webhook signing secret is sealed for. */
export function webhookSecretContext(functionId: string): SealContext {
  return { [SECRET_CONTEXT_KEY]: functionId, purpose: "webhook_signing" };
}
