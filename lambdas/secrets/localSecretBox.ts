import { createCipheriv, createDecipheriv, randomBytes } from "node:crypto";
import { readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import { contextText, type SealContext, type SecretBox } from "./secretBox";

/** The key file in the data dir: 32 random bytes, mode 0600, created at the first start. */
export const SECRETS_KEY_FILE = "secrets.key";
const KEY_BYTES = 32;
const IV_BYTES = 12;
const TAG_BYTES = 16;
/** Sealed text: `v1.<base64 iv>.<base64 ciphertext + tag>`. */
const VERSION = "v1";

/**
 * AES-256-GCM with the key in `<data dir>/secrets.key`: a random IV per value, the context as
 * additional data. The data dir is the service's alone (no worker can read it), so neither the
 * key nor the store's sealed values reach automation code.
 */
export async function createLocalSecretBox(dataDir: string): Promise<SecretBox> {
  const key = await loadOrCreateKey(path.join(dataDir, SECRETS_KEY_FILE));
  return {
    async seal(plaintext, context) {
      const iv = randomBytes(IV_BYTES);
      const cipher = createCipheriv("aes-256-gcm", key, iv);
      cipher.setAAD(Buffer.from(contextText(context), "utf8"));
      const body = Buffer.concat([cipher.update(plaintext, "utf8"), cipher.final(), cipher.getAuthTag()]);
      return `${VERSION}.${iv.toString("base64")}.${body.toString("base64")}`;
    },
    async open(sealed, context) {
      const [version, ivText, bodyText] = sealed.split(".");
      const iv = Buffer.from(ivText ?? "", "base64");
      const body = Buffer.from(bodyText ?? "", "base64");
      if (version !== VERSION || iv.length !== IV_BYTES || body.length < TAG_BYTES) throw new Error("Not a value sealed by this service");
      const decipher = createDecipheriv("aes-256-gcm", key, iv);
      decipher.setAAD(Buffer.from(contextText(context as SealContext), "utf8"));
      decipher.setAuthTag(body.subarray(body.length - TAG_BYTES));
      return Buffer.concat([decipher.update(body.subarray(0, body.length - TAG_BYTES)), decipher.final()]).toString("utf8");
    },
  };
}

/** The key in `file`, made first when there is none (exclusive create: two starts agree on one key). */
export async function loadOrCreateKey(file: string): Promise<Buffer> {
  try {
    await writeFile(file, randomBytes(KEY_BYTES), { mode: 0o600, flag: "wx" });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
  }
  const key = await readFile(file);
  if (key.length !== KEY_BYTES) {
    throw new Error(`${file} must hold ${KEY_BYTES} bytes (the key that seals function secrets); it holds ${key.length}. Restore it from a backup: without it no stored secret can be read`);
  }
  return key;
}
