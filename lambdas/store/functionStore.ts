import { DeleteCommand, GetCommand, PutCommand, QueryCommand, ScanCommand, UpdateCommand } from "@aws-sdk/lib-dynamodb";
import { schemaFromText, schemaToText, type InputSchema, type JsonSchema } from "../code/jsonSchema";
import { parametersFrom, parametersToStored } from "./storedParameters";
import { copyWarnings } from "../functions/copyWarnings";
import type { FunctionItem } from "../functions/types";
import { retriesOf } from "../retries/retrySettings";
import { recordingModeOf } from "../recording/recordingMode";
import { proxyOf } from "../proxy/proxySettings";
import { profilesOf } from "../profiles/profileSettings";
import { isConditionFailed, scanAll, sendConditional, type DocumentSender } from "./dynamo";
import { asStored, DEPLOYING_PK, keys } from "./keys";
import { DEPLOYING_INDEX } from "./tables";

export interface FunctionPage {
  items: FunctionItem[];
  /** Name of the last item when more may follow. */
  lastName: string | null;
}

/** Function records: unique by account + name, found by function_id through gsi1. */
export class FunctionStore {
  constructor(
    private readonly doc: DocumentSender,
    private readonly table: string,
  ) {}

  /** Writes a new record; false when the account already has a function of that name. */
  async create(fn: FunctionItem): Promise<boolean> {
    return sendConditional(
      this.doc,
      new PutCommand({
        TableName: this.table,
        Item: functionToItem(fn),
        ConditionExpression: "attribute_not_exists(pk)",
      }),
    );
  }

  /**
   * Replaces a record if nobody changed it since it was read (optimistic concurrency on
   * `revision`, which the caller increments); false when the record changed or is gone.
   */
  async replace(previous: FunctionItem, next: FunctionItem): Promise<boolean> {
    return sendConditional(
      this.doc,
      new PutCommand({
        TableName: this.table,
        Item: functionToItem(next),
        ConditionExpression: "function_id = :id AND revision = :revision",
        ExpressionAttributeValues: { ":id": previous.function_id, ":revision": previous.revision },
      }),
    );
  }

  /**
   * Sets the deploy status of a version if it is still the latest and `fn`'s deploy (deploy_id,
   * or none) is still the record's (a deploy started since owns the status); the updated
   * record, or undefined.
   *
   * The store answers with the attributes the update set, not the whole item: a record holds up
   * to 64 KB schemas twice and thousands of parameters, which the store would send back and the
   * request thread unmarshal, gunzip and parse on every deploy. When the record's revision was
   * `fn`'s, nothing but next_run_at (set again here, to be answered) changed it since `fn` was
   * written, and `fn` with what was set is the record; otherwise it is read.
   */
  async setStatus(
    fn: FunctionItem,
    status: FunctionItem["status"],
    reason: string | null,
    /** Only a record still `deploying` (a deploy found lost ends it; one that finished meanwhile keeps its end). */
    onlyIfDeploying = false,
  ): Promise<FunctionItem | undefined> {
    const sameDeploy = (fn.deploy_id === undefined ? " AND attribute_not_exists(deploy_id)" : " AND deploy_id = :deploy") + (onlyIfDeploying ? " AND #status = :deploying" : "");
    const deploying = keys.deployingIndex(fn.updated_at, fn.function_id);
    // `deploying` enters the deploying index (by the record's updated_at as the caller holds it); any other status leaves it.
    const index = status === "deploying" ? ", runs_pk = :dpk, runs_sk = :dsk" : " REMOVE runs_pk, runs_sk";
    let set: Record<string, unknown> | undefined;
    try {
      const { Attributes } = await this.doc.send(
        new UpdateCommand({
          TableName: this.table,
          Key: keys.functionByName(fn.account_id, fn.name),
          UpdateExpression: `SET #status = :status, status_reason = :reason, revision = revision + :one, next_run_at = if_not_exists(next_run_at, :none)${index}`,
          ConditionExpression: `function_id = :id AND latest_version = :version${sameDeploy}`,
          ExpressionAttributeNames: { "#status": "status" },
          ExpressionAttributeValues: {
            ":status": status,
            ":reason": reason,
            ":one": 1,
            ":none": null,
            ":id": fn.function_id,
            ":version": fn.latest_version,
            ...(fn.deploy_id === undefined ? {} : { ":deploy": fn.deploy_id }),
            ...(onlyIfDeploying ? { ":deploying": "deploying" } : {}),
            ...(status === "deploying" ? { ":dpk": deploying.runs_pk, ":dsk": deploying.runs_sk } : {}),
          },
          ReturnValues: "UPDATED_NEW",
        }),
      );
      set = Attributes;
    } catch (error) {
      if (isConditionFailed(error)) return undefined;
      throw error;
    }
    if (set?.revision === fn.revision + 1) {
      const nextRun = set.next_run_at;
      return { ...fn, status, status_reason: reason, revision: fn.revision + 1, next_run_at: typeof nextRun === "string" ? nextRun : null };
    }
    const read = await this.getByName(fn.account_id, fn.name);
    return read?.function_id === fn.function_id ? read : undefined;
  }

  /**
   * Functions `deploying` since before `before` (by updated_at), oldest first, at most `limit`:
   * found through the deploying index (keys only), then each read itself (consistent, so one
   * that finished meanwhile is left out).
   */
  async listDeployingSince(before: Date, limit: number): Promise<FunctionItem[]> {
    const { Items } = await this.doc.send(
      new QueryCommand({
        TableName: this.table,
        IndexName: DEPLOYING_INDEX,
        KeyConditionExpression: "runs_pk = :pk AND runs_sk < :before",
        ProjectionExpression: "pk, sk",
        ExpressionAttributeValues: { ":pk": DEPLOYING_PK, ":before": before.toISOString() },
        Limit: limit,
      }),
    );
    const found = await Promise.all(
      (Items ?? []).map((item) => this.getByName(String(item.pk).slice("ACCOUNT#".length), String(item.sk).slice("FN#".length))),
    );
    return found.filter((fn): fn is FunctionItem => fn?.status === "deploying");
  }

  /**
   * Stores a sealed webhook signing secret on the record if it is still the same function (and,
   * with `onlyIfUnset`, has none yet); bumps `revision`, so an update that read the record
   * before cannot write the old secret back. False when the condition did not hold.
   */
  async setWebhookSecret(fn: FunctionItem, sealed: string, onlyIfUnset: boolean): Promise<boolean> {
    return sendConditional(
      this.doc,
      new UpdateCommand({
        TableName: this.table,
        Key: keys.functionByName(fn.account_id, fn.name),
        UpdateExpression: "SET webhook_secret_sealed = :sealed, revision = revision + :one",
        ConditionExpression: onlyIfUnset
          ? "function_id = :id AND (attribute_not_exists(webhook_secret_sealed) OR webhook_secret_sealed = :none)"
          : "function_id = :id",
        ExpressionAttributeValues: { ":sealed": sealed, ":one": 1, ":id": fn.function_id, ...(onlyIfUnset ? { ":none": null } : {}) },
      }),
    );
  }

  /**
   * Notes that the function has (or had) secrets, before the first is stored; bumps `revision`,
   * so an update that read the record before cannot write the note away. False when it is not
   * the same function any more.
   */
  async markHasSecrets(fn: FunctionItem): Promise<boolean> {
    return sendConditional(
      this.doc,
      new UpdateCommand({
        TableName: this.table,
        Key: keys.functionByName(fn.account_id, fn.name),
        UpdateExpression: "SET has_secrets = :yes, revision = revision + :one",
        ConditionExpression: "function_id = :id",
        ExpressionAttributeValues: { ":yes": true, ":one": 1, ":id": fn.function_id },
      }),
    );
  }

  /** Moves a scheduled function's next_run_at forward (if it is still the same function). */
  async setNextRun(fn: FunctionItem, nextRunAt: string | null): Promise<void> {
    await sendConditional(
      this.doc,
      new UpdateCommand({
        TableName: this.table,
        Key: keys.functionByName(fn.account_id, fn.name),
        UpdateExpression: "SET next_run_at = :next",
        ConditionExpression: "function_id = :id",
        ExpressionAttributeValues: { ":next": nextRunAt, ":id": fn.function_id },
      }),
    );
  }

  async getByName(accountId: string, name: string): Promise<FunctionItem | undefined> {
    const { Item } = await this.doc.send(
      new GetCommand({ TableName: this.table, Key: keys.functionByName(accountId, name), ConsistentRead: true }),
    );
    return Item ? toFunction(asStored<StoredFunction>(Item)) : undefined;
  }

  async getById(functionId: string): Promise<FunctionItem | undefined> {
    const index = keys.functionIdIndex(functionId);
    const { Items } = await this.doc.send(
      new QueryCommand({
        TableName: this.table,
        IndexName: "gsi1",
        KeyConditionExpression: "gsi1pk = :pk AND gsi1sk = :sk",
        ExpressionAttributeValues: { ":pk": index.gsi1pk, ":sk": index.gsi1sk },
      }),
    );
    const item = Items?.[0];
    if (!item) return undefined;
    // The index is eventually consistent on AWS: confirm against the record itself.
    return this.getByName(String(item.account_id), String(item.name)).then((fn) =>
      fn?.function_id === functionId ? fn : undefined,
    );
  }

  /** One page of an account's functions in name order, starting after `afterName`. */
  async list(accountId: string, limit: number, afterName: string | null): Promise<FunctionPage> {
    const partition = keys.functionByName(accountId, "");
    const page = await this.doc.send(
      new QueryCommand({
        TableName: this.table,
        KeyConditionExpression: "pk = :pk AND begins_with(sk, :prefix)",
        ExpressionAttributeValues: { ":pk": partition.pk, ":prefix": partition.sk },
        ExclusiveStartKey: afterName === null ? undefined : keys.functionByName(accountId, afterName),
        Limit: limit,
      }),
    );
    const items = (page.Items ?? []).map((item) => toFunction(asStored<StoredFunction>(item)));
    const last = items[items.length - 1];
    return { items, lastName: page.LastEvaluatedKey && last ? last.name : null };
  }

  /** Every function record of every account (a scan: local start-up repairs only). */
  async listEverywhere(): Promise<FunctionItem[]> {
    const items = await scanAll(this.doc, {
      TableName: this.table,
      FilterExpression: "begins_with(pk, :account) AND begins_with(sk, :fn)",
      ExpressionAttributeValues: { ":account": "ACCOUNT#", ":fn": "FN#" },
    });
    return items.map((item) => toFunction(asStored<StoredFunction>(item)));
  }

  /**
   * One page of a scan of every account's function records (the runner rollout's: a page at a
   * time, so that a job near its timeout can go on from `next` in a new invocation). `limit`
   * bounds the items read, before the filter: a page may hold fewer functions, even none, and
   * still have a `next`. `next` is null at the end.
   */
  async listEverywherePage(start: { pk: string; sk: string } | null, limit: number): Promise<{ items: FunctionItem[]; next: { pk: string; sk: string } | null }> {
    const page = await this.doc.send(
      new ScanCommand({
        TableName: this.table,
        FilterExpression: "begins_with(pk, :account) AND begins_with(sk, :fn)",
        ExpressionAttributeValues: { ":account": "ACCOUNT#", ":fn": "FN#" },
        ExclusiveStartKey: start === null ? undefined : { pk: start.pk, sk: start.sk },
        Limit: limit,
      }),
    );
    const last = page.LastEvaluatedKey;
    const next = last && typeof last.pk === "string" && typeof last.sk === "string" ? { pk: last.pk, sk: last.sk } : null;
    return { items: (page.Items ?? []).map((item) => toFunction(asStored<StoredFunction>(item))), next };
  }

  /** Deletes the record if it is still the given function; false otherwise. */
  async delete(fn: FunctionItem): Promise<boolean> {
    return sendConditional(
      this.doc,
      new DeleteCommand({
        TableName: this.table,
        Key: keys.functionByName(fn.account_id, fn.name),
        ConditionExpression: "function_id = :id",
        ExpressionAttributeValues: { ":id": fn.function_id },
      }),
    );
  }
}

/**
 * The record's item, field by field: a record carrying `pk`, `sk` or any other attribute
 * never changes which item is written nor adds to it (STYLE.md, rule 11). The key attributes
 * come from the key builders alone.
 */
function functionToItem(fn: FunctionItem): Record<string, unknown> {
  // The record's named fields, then the keys, which nothing in the record can replace.
  const input = fn.input_schema === undefined ? {} : { input_schema: schemaToText(fn.input_schema) };
  const output = fn.output_schema === undefined ? {} : { output_schema: schemaToText(fn.output_schema) };
  // Only while deploying: the sparse entry the AWS sweeper finds stuck deploys by.
  const deploying = fn.status === "deploying" ? keys.deployingIndex(fn.updated_at, fn.function_id) : {};
  return { ...namedFields(fn), variables: parametersToStored(fn.variables), ...input, ...output, ...deploying, ...keys.functionByName(fn.account_id, fn.name), ...keys.functionIdIndex(fn.function_id) };
}

/** The schemas are kept as JSON text: a string holds any nesting and any number, a DynamoDB map does not. */
type StoredFunction = Omit<FunctionItem, "input_schema" | "output_schema"> & { input_schema?: string; output_schema?: string };

/** A function record from its stored item, field by field: attributes that are not a record's stay behind. */
function toFunction(stored: StoredFunction): FunctionItem {
  const fn: FunctionItem = namedFields(stored);
  const input = schemaFromText<InputSchema>(stored.input_schema);
  if (input) fn.input_schema = input;
  const output = schemaFromText<JsonSchema>(stored.output_schema);
  if (output) fn.output_schema = output;
  return fn;
}

/** Every field of the record but its schemas, by name. */
function namedFields(stored: Omit<FunctionItem, "input_schema" | "output_schema">): Omit<FunctionItem, "input_schema" | "output_schema"> {
  return {
    account_id: stored.account_id,
    function_id: stored.function_id,
    name: stored.name,
    description: stored.description,
    status: stored.status,
    status_reason: stored.status_reason,
    latest_version: stored.latest_version,
    variables: parametersFrom(stored.variables),
    schedule: stored.schedule,
    schedule_timezone: stored.schedule_timezone,
    schedule_params: stored.schedule_params,
    next_run_at: stored.next_run_at,
    timeout_seconds: stored.timeout_seconds,
    memory_mb: stored.memory_mb,
    shared: stored.shared,
    retries: stored.retries ? retriesOf({ retries: stored.retries }) : null,
    recording: recordingModeOf(stored.recording),
    proxy: proxyOf(stored),
    profiles: profilesOf(stored),
    reference_workflow_id: stored.reference_workflow_id,
    webhooks: storedWebhooks(stored.webhooks),
    webhook_secret_sealed: typeof stored.webhook_secret_sealed === "string" ? stored.webhook_secret_sealed : null,
    created_at: stored.created_at,
    updated_at: stored.updated_at,
    code_sha256: stored.code_sha256,
    revision: stored.revision,
    ...(stored.has_secrets === true ? { has_secrets: true } : {}),
    ...(typeof stored.deploy_id === "string" ? { deploy_id: stored.deploy_id } : {}),
    ...(Array.isArray(stored.warnings) ? { warnings: copyWarnings(stored.warnings) } : {}),
  };
}

/** The stored webhooks, each by its named fields ([] for records written before webhooks). */
function storedWebhooks(webhooks: FunctionItem["webhooks"] | undefined): FunctionItem["webhooks"] {
  if (!Array.isArray(webhooks)) return [];
  return webhooks.map((webhook) => ({ url: webhook.url, events: [...webhook.events] }));
}
