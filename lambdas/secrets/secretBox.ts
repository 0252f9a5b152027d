/**
 * What a value is sealed for: the function (and field) it belongs to. A sealed value opens only
 * with the same context (AES-GCM's additional data locally, KMS's encryption context on AWS),
 * so a value copied to another function's item does not open there.
 */
export type SealContext = Readonly<Record<string, string>>;

/**
 * Encryption at rest for values the service must read back (function secrets, webhook signing
 * secrets). Adapters: a key file in the data dir (local), KMS (AWS).
 */
export interface SecretBox {
  /** The value sealed for `context`: opaque text, safe to store. */
  seal(plaintext: string, context: SealContext): Promise<string>;
  /** The value `seal` was given; throws when `sealed` was not sealed by this box for `context`. */
  open(sealed: string, context: SealContext): Promise<string>;
}

/** The context as stable text: its entries in key order (AES-GCM's additional data). */
export function contextText(context: SealContext): string {
  return JSON.stringify(Object.keys(context).sort().map((key) => [key, context[key]]));
}
