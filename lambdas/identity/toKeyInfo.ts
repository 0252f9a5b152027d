import type { ApiKeyItem } from "../store/accountStore";

/** What the API shows of a key: never the secret or its hash. */
export function toKeyInfo(key: ApiKeyItem) {
  return {
    key_id: key.key_id,
    prefix: key.prefix,
    name: key.name,
    account: key.account_id,
    admin: key.admin,
    created_at: key.created_at,
  };
}
