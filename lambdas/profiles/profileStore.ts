import { DeleteCommand, GetCommand, PutCommand } from "@aws-sdk/lib-dynamodb";
import { type DocumentSender, queryAll, sendConditional } from "../store/dynamo";

/** What GET /profiles/{name} shows of a profile (its state is in ProfileBlobs, sealed). */
export interface ProfileInfo {
  name: string;
  bytes: number;
  updated_at: string;
  last_run_id: string | null;
  last_function: string | null;
  domains: string[];
}

const MAX_DOMAINS = 1000;

/** The key of a profile's record (its info; on AWS also the pointer to its state object). */
export const infoKey = (accountId: string, name: string) => ({ pk: `ACCOUNT#${accountId}`, sk: `PROFILE#${name}` });
const leaseKey = (accountId: string, name: string) => ({ pk: `PROFILE#${accountId}#${name}`, sk: "LEASE" });

function toInfo(item: Record<string, unknown>): ProfileInfo {
  return {
    name: String(item.name),
    bytes: Number(item.bytes) || 0,
    updated_at: String(item.updated_at),
    last_run_id: typeof item.last_run_id === "string" ? item.last_run_id : null,
    last_function: typeof item.last_function === "string" ? item.last_function : null,
    domains: Array.isArray(item.domains) ? item.domains.filter((domain): domain is string => typeof domain === "string") : [],
  };
}

/**
 * Profiles' records and their writers' leases. A lease is one item per profile with its owner
 * (a run id) and an expiry: taken with a conditional write when free, expired or already the
 * owner's, so a crashed run's lease lapses by itself and two writers never hold one at once.
 */
export class ProfileStore {
  constructor(
    private readonly doc: DocumentSender,
    private readonly table: string,
  ) {}

  async list(accountId: string): Promise<ProfileInfo[]> {
    const items = await queryAll(this.doc, {
      TableName: this.table,
      KeyConditionExpression: "pk = :pk AND begins_with(sk, :prefix)",
      ExpressionAttributeValues: { ":pk": `ACCOUNT#${accountId}`, ":prefix": "PROFILE#" },
    });
    return items.map(toInfo).sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  }

  async get(accountId: string, name: string): Promise<ProfileInfo | null> {
    const { Item } = await this.doc.send(new GetCommand({ TableName: this.table, Key: infoKey(accountId, name), ConsistentRead: true }));
    return Item ? toInfo(Item) : null;
  }

  async put(accountId: string, info: ProfileInfo): Promise<void> {
    const item = {
      ...infoKey(accountId, info.name),
      name: info.name,
      bytes: info.bytes,
      updated_at: info.updated_at,
      last_run_id: info.last_run_id,
      last_function: info.last_function,
      domains: info.domains.slice(0, MAX_DOMAINS),
    };
    await this.doc.send(new PutCommand({ TableName: this.table, Item: item }));
  }

  /** Removes the record: false when there was none. */
  async remove(accountId: string, name: string): Promise<boolean> {
    const { Attributes } = await this.doc.send(new DeleteCommand({ TableName: this.table, Key: infoKey(accountId, name), ReturnValues: "ALL_OLD" }));
    return Attributes !== undefined;
  }

  /** Takes (or renews) the writer's lease of a profile for `owner` until `expiresAtMs`: false while another holds it. */
  async takeLease(accountId: string, name: string, owner: string, nowMs: number, expiresAtMs: number): Promise<boolean> {
    return sendConditional(
      this.doc,
      new PutCommand({
        TableName: this.table,
        Item: { ...leaseKey(accountId, name), owner, lease_expires_ms: expiresAtMs, expires_at: Math.ceil(expiresAtMs / 1000) + 86_400 },
        ConditionExpression: "attribute_not_exists(pk) OR lease_expires_ms < :now OR #owner = :owner",
        ExpressionAttributeNames: { "#owner": "owner" },
        ExpressionAttributeValues: { ":now": nowMs, ":owner": owner },
      }),
    );
  }

  /** Gives the lease back, if `owner` still holds it. */
  async releaseLease(accountId: string, name: string, owner: string): Promise<void> {
    await sendConditional(
      this.doc,
      new DeleteCommand({
        TableName: this.table,
        Key: leaseKey(accountId, name),
        ConditionExpression: "#owner = :owner",
        ExpressionAttributeNames: { "#owner": "owner" },
        ExpressionAttributeValues: { ":owner": owner },
      }),
    );
  }
}
