import { GenerateDataKeyCommand, type KMSClient } from "@aws-sdk/client-kms";
import { type RunSecretsEnvelope, runDataKeyContext, sealWithDataKey } from "./envelopeFormat";

/** How long a trusted Lambda keeps a function's run data key (docs/deploy.md, "Cost model"). */
export const RUN_DATA_KEY_TTL_MS = 5 * 60_000;
/** At most this many data keys per container (the oldest goes first). */
export const RUN_DATA_KEY_MAX = 1000;

/** Seals a run's secret values for the function's own Lambda (envelopeFormat.ts). */
export interface RunDataKeys {
  seal(functionId: string, runner: string, values: Readonly<Record<string, string>>): Promise<RunSecretsEnvelope>;
}

interface DataKey {
  plaintext: Uint8Array;
  blob: string;
  until: number;
}

/**
 * KMS `GenerateDataKey` (AES-256) per function and Lambda session, kept in this trusted Lambda's
 * memory (the run starter's: the invoke routes, the scheduled run, the recorder and the sweeper;
 * never the function's Lambda, where user code runs) for RUN_DATA_KEY_TTL_MS, RUN_DATA_KEY_MAX
 * keys at most. Concurrent first runs of a function share one request; a failed one is not kept.
 */
export function createRunDataKeys(kms: Pick<KMSClient, "send">, keyId: string, now: () => number = Date.now): RunDataKeys {
  const keys = new Map<string, Promise<DataKey>>();
  const dataKey = (functionId: string, runner: string): Promise<DataKey> => {
    const context = runDataKeyContext(functionId, runner);
    const cacheKey = JSON.stringify(context);
    const cached = keys.get(cacheKey);
    if (cached) return cached.then((key) => (key.until > now() ? key : fresh(cacheKey, context)));
    return fresh(cacheKey, context);
  };
  const fresh = (cacheKey: string, context: Record<string, string>): Promise<DataKey> => {
    keys.delete(cacheKey);
    while (keys.size >= RUN_DATA_KEY_MAX) keys.delete(keys.keys().next().value as string);
    const made = kms.send(new GenerateDataKeyCommand({ KeyId: keyId, KeySpec: "AES_256", EncryptionContext: context })).then(({ Plaintext, CiphertextBlob }) => {
      if (!Plaintext || !CiphertextBlob) throw new Error("KMS answered GenerateDataKey without a key");
      return { plaintext: Plaintext, blob: Buffer.from(CiphertextBlob).toString("base64"), until: now() + RUN_DATA_KEY_TTL_MS };
    });
    keys.set(cacheKey, made);
    made.catch(() => {
      if (keys.get(cacheKey) === made) keys.delete(cacheKey);
    });
    return made;
  };
  return {
    async seal(functionId, runner, values) {
      const key = await dataKey(functionId, runner);
      return { data_key: key.blob, items: Object.entries(values).map(([name, value]) => ({ name, sealed: sealWithDataKey(key.plaintext, functionId, name, value) })) };
    },
  };
}
