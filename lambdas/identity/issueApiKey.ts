import type { AccountStore, ApiKeyItem } from "../store/accountStore";
import { generateApiKey, hashApiKey, keyPrefix, newKeyId } from "./apiKeys";

export interface IssuedKey {
  item: ApiKeyItem;
  /** The secret, to be shown once. */
  key: string;
}

export interface IssueKeyOptions {
  account_id: string;
  plan: string;
  admin: boolean;
  name: string | null;
  now: Date;
  /** Register this exact secret instead of generating one (the bootstrap key). */
  secret?: string;
}

/**
 * Creates the account if it is new, then stores a key for it (hash only). With a given
 * secret that is already registered, returns the existing key (idempotent bootstrap).
 */
export async function issueApiKey(accounts: AccountStore, options: IssueKeyOptions): Promise<IssuedKey> {
  const createdAt = options.now.toISOString();
  await accounts.ensureAccount({ account_id: options.account_id, plan: options.plan, created_at: createdAt });
  const key = options.secret ?? generateApiKey();
  const item: ApiKeyItem = {
    key_id: newKeyId(),
    account_id: options.account_id,
    key_hash: hashApiKey(key),
    prefix: keyPrefix(key),
    name: options.name,
    admin: options.admin,
    created_at: createdAt,
  };
  if (await accounts.putApiKey(item)) return { item, key };
  const existing = await accounts.getApiKeyByHash(item.key_hash);
  if (!existing) throw new Error("API key vanished while it was being registered");
  return { item: existing, key };
}
