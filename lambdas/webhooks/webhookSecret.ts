import { createHmac, randomBytes } from "node:crypto";
import type { Deps } from "../deps";
import type { FunctionItem } from "../functions/types";
import { webhookSecretContext } from "../secrets/secretContexts";
import type { SecretBox } from "../secrets/secretBox";

const PREFIX = "whsec_";
const SECRET_BYTES = 32;

/** A new signing secret in the Standard Webhooks form: `whsec_` + base64 of 32 random bytes. */
export function newWebhookSecret(): string {
  return `${PREFIX}${randomBytes(SECRET_BYTES).toString("base64")}`;
}

/**
 * The Standard Webhooks signature header value: `v1,` + base64 of HMAC-SHA256 over
 * `{id}.{timestamp}.{body}`, keyed by the base64-decoded part of the secret after `whsec_`.
 */
export function signWebhook(secret: string, id: string, timestamp: number, body: string): string {
  const key = Buffer.from(secret.startsWith(PREFIX) ? secret.slice(PREFIX.length) : secret, "base64");
  return `v1,${createHmac("sha256", key).update(`${id}.${timestamp}.${body}`).digest("base64")}`;
}

/**
 * Gives a function with webhooks its first signing secret: sealed for the function, stored only
 * if it has none (a conditional write, so two racing updates cannot both show one). Returns the
 * secret to show, once, or null when the function has no webhooks, had a secret, or another
 * request set it meanwhile.
 */
export async function ensureWebhookSecret(deps: Pick<Deps, "store" | "secretBox">, fn: FunctionItem): Promise<string | null> {
  if (fn.webhooks.length === 0 || fn.webhook_secret_sealed) return null;
  const secret = newWebhookSecret();
  const sealed = await deps.secretBox.seal(secret, webhookSecretContext(fn.function_id));
  return (await deps.store.functions.setWebhookSecret(fn, sealed, true)) ? secret : null;
}

/**
 * Replaces a function's signing secret with a new one (the old one signs nothing from now on:
 * no grace period) and returns it, to show once. False from the store (the function was
 * deleted or renamed meanwhile) returns null.
 */
export async function rotateWebhookSecret(deps: Pick<Deps, "store" | "secretBox">, fn: FunctionItem): Promise<string | null> {
  const secret = newWebhookSecret();
  const sealed = await deps.secretBox.seal(secret, webhookSecretContext(fn.function_id));
  return (await deps.store.functions.setWebhookSecret(fn, sealed, false)) ? secret : null;
}

/** The function's signing secret in plain text (null when it has none); for signing only, never shown or logged. */
export async function openWebhookSecret(secretBox: SecretBox, fn: FunctionItem): Promise<string | null> {
  if (!fn.webhook_secret_sealed) return null;
  return secretBox.open(fn.webhook_secret_sealed, webhookSecretContext(fn.function_id));
}
