import { DecryptCommand, EncryptCommand, GenerateDataKeyCommand } from "@aws-sdk/client-kms";
import { createCipheriv, createDecipheriv, randomBytes } from "node:crypto";
import { RUNNER_CONTEXT_KEY, SECRET_CONTEXT_KEY } from "../../lambdas/secrets/secretContexts";

type Context = Record<string, string>;

/** What a caller sent, as KMS (and CloudTrail) would see it. */
export interface KmsCall {
  caller: string;
  command: "Encrypt" | "Decrypt" | "GenerateDataKey";
  keyId: string | undefined;
  context: Context;
}

/**
 * KMS's Encrypt and Decrypt, faked in this process with the grants of lib/secretsKey.ts: the
 * service's callers need a `function_id` in the encryption context; a function's Lambda
 * (caller `<role id>:<Lambda name>`) may only Decrypt with a `runner` context equal to its own
 * session id (`aws:userid`). A ciphertext opens only under the key and exact context it was
 * sealed with (AccessDenied / InvalidCiphertextException otherwise, as KMS answers).
 */
export class InProcessKms {
  readonly calls: KmsCall[] = [];
  private readonly key = randomBytes(32);

  constructor(
    readonly keyArn: string,
    /** The role id of the functions' execution role: callers `<it>:…` are function Lambdas. */
    private readonly runnerRoleId: string,
  ) {}

  /** A KMS client as `caller` sees it. */
  client(caller: string): { send(command: unknown): Promise<unknown> } {
    return { send: async (command) => this.send(caller, command) };
  }

  private async send(caller: string, command: unknown): Promise<unknown> {
    if (command instanceof EncryptCommand) {
      const context = { ...(command.input.EncryptionContext ?? {}) };
      this.calls.push({ caller, command: "Encrypt", keyId: command.input.KeyId, context });
      this.authorize(caller, "Encrypt", context);
      if (command.input.KeyId !== this.keyArn) throw kmsError("NotFoundException", `Key '${command.input.KeyId}' does not exist`);
      return { CiphertextBlob: this.encrypt(Buffer.from(command.input.Plaintext ?? new Uint8Array()), context), KeyId: this.keyArn };
    }
    if (command instanceof GenerateDataKeyCommand) {
      // A fresh AES-256 key, answered in the clear and encrypted under the key with the context (as KMS does).
      const context = { ...(command.input.EncryptionContext ?? {}) };
      this.calls.push({ caller, command: "GenerateDataKey", keyId: command.input.KeyId, context });
      this.authorize(caller, "GenerateDataKey", context);
      if (command.input.KeyId !== this.keyArn) throw kmsError("NotFoundException", `Key '${command.input.KeyId}' does not exist`);
      if (command.input.KeySpec !== "AES_256") throw new Error("InProcessKms: only KeySpec AES_256 is faked");
      const plaintext = randomBytes(32);
      return { Plaintext: new Uint8Array(plaintext), CiphertextBlob: this.encrypt(plaintext, context), KeyId: this.keyArn };
    }
    if (command instanceof DecryptCommand) {
      const context = { ...(command.input.EncryptionContext ?? {}) };
      this.calls.push({ caller, command: "Decrypt", keyId: command.input.KeyId, context });
      this.authorize(caller, "Decrypt", context);
      const blob = Buffer.from(command.input.CiphertextBlob ?? new Uint8Array());
      try {
        const decipher = createDecipheriv("aes-256-gcm", this.key, blob.subarray(0, 12));
        decipher.setAAD(Buffer.from(canonical(context)));
        decipher.setAuthTag(blob.subarray(blob.length - 16));
        const plaintext = Buffer.concat([decipher.update(blob.subarray(12, blob.length - 16)), decipher.final()]);
        return { Plaintext: new Uint8Array(plaintext), KeyId: this.keyArn };
      } catch {
        throw kmsError("InvalidCiphertextException", "");
      }
    }
    throw new Error(`InProcessKms: ${(command as object).constructor.name} is not faked`);
  }

  private encrypt(plaintext: Buffer, context: Context): Uint8Array {
    const iv = randomBytes(12);
    const cipher = createCipheriv("aes-256-gcm", this.key, iv);
    cipher.setAAD(Buffer.from(canonical(context)));
    return new Uint8Array(Buffer.concat([iv, cipher.update(plaintext), cipher.final(), cipher.getAuthTag()]));
  }

  /** The key's grants (lib/secretsKey.ts), by who calls. */
  private authorize(caller: string, action: "Encrypt" | "Decrypt" | "GenerateDataKey", context: Context): void {
    const denied = () => kmsError("AccessDeniedException", `${caller} is not authorized to perform kms:${action} with this encryption context`);
    if (caller.startsWith(`${this.runnerRoleId}:`)) {
      if (action !== "Decrypt" || context[RUNNER_CONTEXT_KEY] !== caller) throw denied();
      return;
    }
    if (context[SECRET_CONTEXT_KEY] === undefined) throw denied();
    // The run starters' GenerateDataKey: only for a run's data key (lib/secretsKey.ts, grantRunDataKeys).
    if (action === "GenerateDataKey" && context.purpose !== "run_data_key") throw denied();
  }
}

const canonical = (context: Context) => JSON.stringify(Object.keys(context).sort().map((key) => [key, context[key]]));

function kmsError(name: string, message: string): Error {
  return Object.assign(new Error(message || name), { name, $metadata: { httpStatusCode: 400 } });
}
