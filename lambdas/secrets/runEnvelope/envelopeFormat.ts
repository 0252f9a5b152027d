import { createCipheriv, createDecipheriv, randomBytes } from "node:crypto";
import { RUNNER_CONTEXT_KEY, SECRET_CONTEXT_KEY } from "../secretContexts";

/**
 * A run's secrets sealed together under one data key (the cost section of #23): the service
 * seals the values it opened with a data key it keeps a few minutes (runDataKeys.ts); the
 * function's Lambda opens the data key with one KMS `Decrypt` per run, whatever the number of
 * secrets, then each value here. Each value is AES-256-GCM: base64 of IV (12 bytes), ciphertext,
 * tag (16 bytes), with the function and the secret's name as associated data, so a value cannot
 * be passed off as another secret or another function's.
 */
export interface RunSecretsEnvelope {
  /** The data key as KMS encrypted it (base64), under runDataKeyContext. */
  data_key: string;
  items: { name: string; sealed: string }[];
}

/** The `purpose` in a run data key's encryption context (the stack's grant of GenerateDataKey requires it). */
export const RUN_DATA_KEY_PURPOSE = "run_data_key";

/** The encryption context of a run data key: the function, and the only Lambda session that may open it (lib/secretsKey.ts). */
export function runDataKeyContext(functionId: string, runner: string): Record<string, string> {
  return { [SECRET_CONTEXT_KEY]: functionId, [RUNNER_CONTEXT_KEY]: runner, purpose: RUN_DATA_KEY_PURPOSE };
}

const IV_BYTES = 12;
const TAG_BYTES = 16;
const associatedData = (functionId: string, name: string) => Buffer.from(JSON.stringify([functionId, name]), "utf8");

/** Seals one value of the function's secret `name` under `key` (32 bytes). */
export function sealWithDataKey(key: Uint8Array, functionId: string, name: string, value: string): string {
  const iv = randomBytes(IV_BYTES);
  const cipher = createCipheriv("aes-256-gcm", key, iv);
  cipher.setAAD(associatedData(functionId, name));
  return Buffer.concat([iv, cipher.update(value, "utf8"), cipher.final(), cipher.getAuthTag()]).toString("base64");
}

/** Opens what sealWithDataKey sealed; throws when the key, the function or the name differ, or the value was changed. */
export function openWithDataKey(key: Uint8Array, functionId: string, name: string, sealed: string): string {
  const blob = Buffer.from(sealed, "base64");
  if (blob.length < IV_BYTES + TAG_BYTES) throw new Error(`The sealed value of secret ${name} is too short`);
  const decipher = createDecipheriv("aes-256-gcm", key, blob.subarray(0, IV_BYTES));
  decipher.setAAD(associatedData(functionId, name));
  decipher.setAuthTag(blob.subarray(blob.length - TAG_BYTES));
  return Buffer.concat([decipher.update(blob.subarray(IV_BYTES, blob.length - TAG_BYTES)), decipher.final()]).toString("utf8");
}

/** True for a well-formed envelope (the runner checks the event's before it opens anything). */
export function isRunSecretsEnvelope(value: unknown): value is RunSecretsEnvelope {
  const envelope = value as RunSecretsEnvelope | null;
  return (
    typeof envelope === "object" &&
    envelope !== null &&
    typeof envelope.data_key === "string" &&
    Array.isArray(envelope.items) &&
    envelope.items.every((item) => typeof item?.name === "string" && typeof item.sealed === "string")
  );
}
