import { DecryptCommand, EncryptCommand, type KMSClient } from "@aws-sdk/client-kms";
import type { SealContext, SecretBox } from "./secretBox";
import { RUNNER_CONTEXT_KEY, SECRET_CONTEXT_KEY } from "./secretContexts";

/** How long a warm Lambda keeps what it opened (a run opens its function's secrets each time). */
const OPENED_CACHE_MS = 5 * 60_000;
const OPENED_CACHE_MAX = 1000;

/**
 * KMS: each value encrypted under the service's key with the context as KMS's encryption
 * context (in CloudTrail, and bound by the key's grants, lib/secretsKey.ts). A function's
 * secret is sealed with one more entry, `runner`: the session id its own Lambda calls KMS with
 * (`runnerOf(function_id)`, `<execution role id>:<Lambda name>`), so that Lambda can open its
 * own secrets (kms:Decrypt only where `runner` equals its `aws:userid`) and no other
 * function's. Values are at most 4 KB, KMS's limit for direct encryption. Opened values are
 * kept a few minutes by a warm container, by ciphertext.
 */
export function createKmsSecretBox(kms: Pick<KMSClient, "send">, keyId: string, runnerOf?: (functionId: string) => string): SecretBox {
  const opened = new Map<string, { value: string; until: number }>();
  const fullContext = (context: SealContext): Record<string, string> => {
    const functionId = context[SECRET_CONTEXT_KEY];
    if (functionId === undefined || context.secret === undefined) return { ...context };
    // Without what names the function's Lambda session (the webhook delivery Lambda), a function secret is not for this box.
    if (!runnerOf) throw new Error("This KMS box opens no function secrets");
    return { ...context, [RUNNER_CONTEXT_KEY]: runnerOf(functionId) };
  };
  return {
    async seal(plaintext, context) {
      const { CiphertextBlob } = await kms.send(new EncryptCommand({ KeyId: keyId, Plaintext: Buffer.from(plaintext, "utf8"), EncryptionContext: fullContext(context) }));
      if (!CiphertextBlob) throw new Error("KMS answered Encrypt without a ciphertext");
      return Buffer.from(CiphertextBlob).toString("base64");
    },
    async open(sealed, context) {
      const encryptionContext = fullContext(context);
      const cacheKey = `${JSON.stringify(encryptionContext)} ${sealed}`;
      const cached = opened.get(cacheKey);
      if (cached && cached.until > Date.now()) return cached.value;
      const { Plaintext } = await kms.send(new DecryptCommand({ KeyId: keyId, CiphertextBlob: Buffer.from(sealed, "base64"), EncryptionContext: encryptionContext }));
      if (!Plaintext) throw new Error("KMS answered Decrypt without a plaintext");
      const value = Buffer.from(Plaintext).toString("utf8");
      if (opened.size >= OPENED_CACHE_MAX) opened.clear();
      opened.set(cacheKey, { value, until: Date.now() + OPENED_CACHE_MS });
      return value;
    },
  };
}

/** The session id a function's Lambda calls AWS with: `<execution role id>:<Lambda name>`. */
export function runnerSession(executionRoleId: string, lambdaName: string): string {
  return `${executionRoleId}:${lambdaName}`;
}
