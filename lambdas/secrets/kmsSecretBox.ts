import { DecryptCommand, EncryptCommand, type KMSClient } from "@aws-sdk/client-kms";
import type { SecretBox } from "./secretBox";

/**
 * KMS: each value encrypted under the service's key with the context as KMS's encryption
 * context (logged by CloudTrail, and bound by IAM conditions: a function's role may decrypt
 * only what was sealed for its own function_id). Values are at most 4 KB, KMS's limit for
 * direct encryption.
 */
export function createKmsSecretBox(kms: Pick<KMSClient, "send">, keyId: string): SecretBox {
  return {
    async seal(plaintext, context) {
      const { CiphertextBlob } = await kms.send(new EncryptCommand({ KeyId: keyId, Plaintext: Buffer.from(plaintext, "utf8"), EncryptionContext: { ...context } }));
      if (!CiphertextBlob) throw new Error("KMS answered Encrypt without a ciphertext");
      return Buffer.from(CiphertextBlob).toString("base64");
    },
    async open(sealed, context) {
      const { Plaintext } = await kms.send(new DecryptCommand({ KeyId: keyId, CiphertextBlob: Buffer.from(sealed, "base64"), EncryptionContext: { ...context } }));
      if (!Plaintext) throw new Error("KMS answered Decrypt without a plaintext");
      return Buffer.from(Plaintext).toString("utf8");
    },
  };
}
