import { DeleteCommand, GetCommand, PutCommand, QueryCommand, UpdateCommand } from "@aws-sdk/lib-dynamodb";
import { isConditionFailed, queryAll, sendConditional, type DocumentSender } from "./dynamo";
import { asStored, keys } from "./keys";

export interface AccountItem {
  account_id: string;
  plan: string;
  created_at: string;
}

export interface ApiKeyItem {
  key_id: string;
  account_id: string;
  /** SHA-256 (hex) of the secret; the secret itself is never stored. */
  key_hash: string;
  /** The first characters of the secret, to tell keys apart in listings. */
  prefix: string;
  name: string | null;
  admin: boolean;
  created_at: string;
}

/** Accounts and their API keys. */
export class AccountStore {
  constructor(
    private readonly doc: DocumentSender,
    private readonly table: string,
  ) {}

  async getAccount(accountId: string): Promise<AccountItem | undefined> {
    const { Item } = await this.doc.send(new GetCommand({ TableName: this.table, Key: keys.account(accountId) }));
    return Item ? toAccount(asStored<AccountItem>(Item)) : undefined;
  }

  /** Creates the account if it does not exist yet; returns the account as stored. */
  async ensureAccount(account: AccountItem): Promise<AccountItem> {
    try {
      await this.doc.send(
        new PutCommand({
          TableName: this.table,
          Item: accountToItem(account),
          ConditionExpression: "attribute_not_exists(pk)",
        }),
      );
      return toAccount(account);
    } catch (error) {
      if (!isConditionFailed(error)) throw error;
      const existing = await this.getAccount(account.account_id);
      if (!existing) throw error;
      return existing;
    }
  }

  async setPlan(accountId: string, plan: string): Promise<void> {
    await this.doc.send(
      new UpdateCommand({
        TableName: this.table,
        Key: keys.account(accountId),
        UpdateExpression: "SET #plan = :plan",
        ConditionExpression: "attribute_exists(pk)",
        ExpressionAttributeNames: { "#plan": "plan" },
        ExpressionAttributeValues: { ":plan": plan },
      }),
    );
  }

  /** Stores a key; false when a key with the same hash exists already. */
  async putApiKey(key: ApiKeyItem): Promise<boolean> {
    return sendConditional(
      this.doc,
      new PutCommand({
        TableName: this.table,
        Item: apiKeyToItem(key),
        ConditionExpression: "attribute_not_exists(pk)",
      }),
    );
  }

  async getApiKeyByHash(hash: string): Promise<ApiKeyItem | undefined> {
    const { Item } = await this.doc.send(new GetCommand({ TableName: this.table, Key: keys.apiKey(hash) }));
    return Item ? toApiKey(asStored<ApiKeyItem>(Item)) : undefined;
  }

  async listApiKeys(accountId: string): Promise<ApiKeyItem[]> {
    const items = (
      await queryAll(this.doc, {
        TableName: this.table,
        IndexName: "gsi1",
        KeyConditionExpression: "gsi1pk = :pk AND begins_with(gsi1sk, :prefix)",
        ExpressionAttributeValues: { ":pk": keys.apiKeyIndex(accountId, "").gsi1pk, ":prefix": "KEY#" },
      })
    ).map((item) => toApiKey(asStored<ApiKeyItem>(item)));
    return items.sort((a, b) => a.created_at.localeCompare(b.created_at) || a.key_id.localeCompare(b.key_id));
  }

  /** Deletes one of the account's keys; false when the account has no such key. */
  async deleteApiKey(accountId: string, keyId: string): Promise<boolean> {
    const index = keys.apiKeyIndex(accountId, keyId);
    const { Items } = await this.doc.send(
      new QueryCommand({
        TableName: this.table,
        IndexName: "gsi1",
        KeyConditionExpression: "gsi1pk = :pk AND gsi1sk = :sk",
        ExpressionAttributeValues: { ":pk": index.gsi1pk, ":sk": index.gsi1sk },
      }),
    );
    const found = Items?.[0];
    if (!found) return false;
    return sendConditional(
      this.doc,
      new DeleteCommand({
        TableName: this.table,
        Key: { pk: found.pk, sk: found.sk },
        ConditionExpression: "account_id = :account",
        ExpressionAttributeValues: { ":account": accountId },
      }),
    );
  }
}

/*
 * Items are built, and read back, field by field: an object carrying `pk`, `sk`, `admin` or
 * any other attribute never changes which item is written nor adds to it (STYLE.md, rule 11).
 * The key attributes come from the key builders alone.
 */

/** The stored account: the key, then the record's named fields (toAccount), so no field can name a key. */
function accountToItem(account: AccountItem): Record<string, unknown> {
  return { ...toAccount(account), ...keys.account(account.account_id) };
}

function toAccount(account: AccountItem): AccountItem {
  return { account_id: account.account_id, plan: account.plan, created_at: account.created_at };
}

/** The stored key: its named fields (toApiKey), then the keys, which nothing in the record can replace. */
function apiKeyToItem(key: ApiKeyItem): Record<string, unknown> {
  return { ...toApiKey(key), ...keys.apiKey(key.key_hash), ...keys.apiKeyIndex(key.account_id, key.key_id) };
}

function toApiKey(key: ApiKeyItem): ApiKeyItem {
  return {
    key_id: key.key_id,
    account_id: key.account_id,
    key_hash: key.key_hash,
    prefix: key.prefix,
    name: key.name,
    admin: key.admin === true,
    created_at: key.created_at,
  };
}
