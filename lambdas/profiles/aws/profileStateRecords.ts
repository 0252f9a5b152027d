import { DeleteCommand, GetCommand, PutCommand, UpdateCommand } from "@aws-sdk/lib-dynamodb";
import { type DocumentSender, queryAll } from "../../store/dynamo";
import { runKey } from "../../store/runItems";
import { PROFILE_NAME } from "../profileSettings";
import { infoKey, type ProfileInfo } from "../profileStore";

const MAX_DOMAINS = 1000;
/** How long a run's lease list outlives its lease (found by a late recorder or the sweeper). */
const LEASE_LIST_KEEP_SECONDS = 7 * 86_400;

/** The profiles one attempt of a run leased as their writer before it started (AWS). */
export interface RunProfileLeases {
  account_id: string;
  function_name: string;
  names: string[];
}

const leasesKey = (runId: string, attempt: number) => ({ pk: runKey(runId).pk, sk: `PROFILE_LEASES#${attempt}` });

/**
 * What the AWS run pipeline keeps of profiles besides their records and leases (ProfileStore):
 * on each profile's record, `state_key`, the S3 object of its current state (never shown by the
 * API); and per run attempt, the names it leased before it started, so that whoever ends the run
 * (the recorder, or the sweeper for a run whose workflow failed) gives each lease back and
 * deletes what the run may have uploaded.
 */
export class ProfileStateRecords {
  constructor(
    private readonly doc: DocumentSender,
    private readonly table: string,
  ) {}

  /** The state object of each of the account's profiles that has one, by name. */
  async stateKeys(accountId: string): Promise<Map<string, string>> {
    const items = await queryAll(this.doc, {
      TableName: this.table,
      KeyConditionExpression: "pk = :pk AND begins_with(sk, :prefix)",
      ExpressionAttributeValues: { ":pk": `ACCOUNT#${accountId}`, ":prefix": "PROFILE#" },
      ProjectionExpression: "#name, state_key",
      ExpressionAttributeNames: { "#name": "name" },
    });
    const keys = new Map<string, string>();
    for (const item of items) {
      if (typeof item.name === "string" && PROFILE_NAME.test(item.name) && typeof item.state_key === "string") keys.set(item.name, item.state_key);
    }
    return keys;
  }

  /** The state object of one profile (null: none, or no record). */
  async stateKey(accountId: string, name: string): Promise<string | null> {
    const { Item } = await this.doc.send(new GetCommand({ TableName: this.table, Key: infoKey(accountId, name), ConsistentRead: true }));
    return typeof Item?.state_key === "string" ? Item.state_key : null;
  }

  /** Makes `stateKey` the profile's state, with its record's fields; answers the state it replaced (null: none). */
  async adopt(accountId: string, info: ProfileInfo, stateKey: string): Promise<string | null> {
    const { Attributes } = await this.doc.send(
      new UpdateCommand({
        TableName: this.table,
        Key: infoKey(accountId, info.name),
        UpdateExpression: "SET #name = :name, bytes = :bytes, updated_at = :updated, last_run_id = :run, last_function = :fn, domains = :domains, state_key = :key",
        ExpressionAttributeNames: { "#name": "name" },
        ExpressionAttributeValues: {
          ":name": info.name,
          ":bytes": info.bytes,
          ":updated": info.updated_at,
          ":run": info.last_run_id,
          ":fn": info.last_function,
          ":domains": info.domains.slice(0, MAX_DOMAINS),
          ":key": stateKey,
        },
        ReturnValues: "UPDATED_OLD",
      }),
    );
    return typeof Attributes?.state_key === "string" && Attributes.state_key !== stateKey ? Attributes.state_key : null;
  }

  async putLeases(runId: string, attempt: number, leases: RunProfileLeases, nowMs: number): Promise<void> {
    const item = {
      ...leasesKey(runId, attempt),
      account_id: leases.account_id,
      function_name: leases.function_name,
      names: [...leases.names],
      expires_at: Math.ceil(nowMs / 1000) + LEASE_LIST_KEEP_SECONDS,
    };
    await this.doc.send(new PutCommand({ TableName: this.table, Item: item }));
  }

  async leases(runId: string, attempt: number): Promise<RunProfileLeases | null> {
    const { Item } = await this.doc.send(new GetCommand({ TableName: this.table, Key: leasesKey(runId, attempt), ConsistentRead: true }));
    if (!Item || typeof Item.account_id !== "string") return null;
    const names = Array.isArray(Item.names) ? Item.names.filter((name): name is string => typeof name === "string" && PROFILE_NAME.test(name)) : [];
    return { account_id: Item.account_id, function_name: typeof Item.function_name === "string" ? Item.function_name : "", names };
  }

  async removeLeases(runId: string, attempt: number): Promise<void> {
    await this.doc.send(new DeleteCommand({ TableName: this.table, Key: leasesKey(runId, attempt) }));
  }
}
