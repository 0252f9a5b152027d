import { createHash, randomBytes } from "node:crypto";
import { ulid } from "ulid";

export const API_KEY_PREFIX = "bfn_";

/** A new secret: `bfn_` + 32 random bytes in base64url. */
export function generateApiKey(): string {
  return API_KEY_PREFIX + randomBytes(32).toString("base64url");
}

/** The only form in which a key is stored. */
export function hashApiKey(key: string): string {
  return createHash("sha256").update(key, "utf8").digest("hex");
}

export function newKeyId(): string {
  return `key_${ulid().toLowerCase()}`;
}

/** Enough of the secret to tell keys apart in a listing, never enough to use it. */
export function keyPrefix(key: string): string {
  return key.slice(0, API_KEY_PREFIX.length + 6);
}
