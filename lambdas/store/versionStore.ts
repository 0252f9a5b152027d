import { randomUUID } from "node:crypto";
import {
  BatchWriteCommand,
  DeleteCommand,
  PutCommand,
  QueryCommand,
} from "@aws-sdk/lib-dynamodb";
import { copyWarnings } from "../functions/copyWarnings";
import type { VersionItem, VersionWithCode } from "../functions/types";
import { parametersFrom, parametersToStored } from "./storedParameters";
import { schemaFromText, schemaToText, type InputSchema } from "../code/jsonSchema";
import { fromParts, toParts } from "./blobParts";
import { isConditionFailed, queryAll, scanAll, sendConditional, type DocumentSender } from "./dynamo";
import { asStored, keys } from "./keys";

/** The schemas are kept as JSON text: a string holds any nesting and any number, a DynamoDB map does not. */
type StoredVersion = Omit<VersionItem, "input_schema" | "output_schema"> & {
  code_token: string;
  input_schema?: string;
  output_schema?: string;
};

const CODE_FIELDS = ["source", "js"] as const;

/**
 * Versions of a function: one small item per version (listing reads only those) and the
 * code (source and compiled JS) in separate gzipped part items written before it.
 */
export class VersionStore {
  constructor(
    private readonly doc: DocumentSender,
    private readonly table: string,
  ) {}

  /**
   * Writes a version: its code parts first, then the version item as the commit point.
   * Returns the write's token (to undo exactly this write with deleteVersion), or null,
   * leaving nothing behind, when that version number exists already.
   */
  async create(version: VersionWithCode): Promise<string | null> {
    const token = randomUUID();
    const parts = CODE_FIELDS.flatMap((field) =>
      toParts(field === "source" ? version.source : version.js).map((data, part) => {
        const { pk, sk } = keys.codePart(version.function_id, version.version, token, field, part);
        return { pk, sk, data };
      }),
    );
    await this.writeAll(parts);
    try {
      await this.doc.send(
        new PutCommand({
          TableName: this.table,
          Item: versionToItem(version, token),
          ConditionExpression: "attribute_not_exists(pk)",
        }),
      );
      return token;
    } catch (error) {
      if (!isConditionFailed(error)) throw error;
      // Another writer took this version number first: remove only our own parts.
      await this.deleteKeys(parts.map(({ pk, sk }) => ({ pk, sk })));
      return null;
    }
  }

  /** Every version, oldest first (code not included). */
  async list(functionId: string): Promise<VersionItem[]> {
    const items = await this.queryAll(functionId, "VER#");
    return items.map((item) => toVersion(asStored<StoredVersion>(item)));
  }

  /** One version without its code (its parameters, hash and date). */
  async meta(functionId: string, version: number): Promise<VersionItem | undefined> {
    const stored = await this.item(functionId, version);
    return stored ? toVersion(stored) : undefined;
  }

  async get(functionId: string, version: number): Promise<VersionWithCode | undefined> {
    const stored = await this.item(functionId, version);
    if (!stored) return undefined;
    const prefix = keys.codePrefix(version, stored.code_token);
    const parts = await this.queryAll(functionId, prefix);
    const code = (field: string) =>
      fromParts(parts.filter((p) => String(p.sk).startsWith(`${prefix}${field}#`)).map((p) => p.data as Uint8Array));
    return { ...toVersion(stored), source: code("source"), js: code("js") };
  }

  private async item(functionId: string, version: number): Promise<StoredVersion | undefined> {
    const { pk, sk } = keys.version(functionId, version);
    const { Items } = await this.doc.send(
      new QueryCommand({
        TableName: this.table,
        KeyConditionExpression: "pk = :pk AND sk = :sk",
        ExpressionAttributeValues: { ":pk": pk, ":sk": sk },
        ConsistentRead: true,
      }),
    );
    const item = Items?.[0];
    return item ? asStored<StoredVersion>(item) : undefined;
  }

  /** Deletes every version and code part of a function (its usage stays with the account). */
  async deleteAll(functionId: string): Promise<void> {
    const items = [...(await this.queryAll(functionId, "VER#")), ...(await this.queryAll(functionId, "CODE#"))];
    await this.deleteKeys(items.map((item) => ({ pk: item.pk, sk: item.sk })));
  }

  /**
   * Undoes one write of `create` (a version no record references): the version item only
   * if it is still that write's, and that write's code parts. Racing writers are untouched.
   */
  async deleteVersion(functionId: string, version: number, token: string): Promise<void> {
    await sendConditional(
      this.doc,
      new DeleteCommand({
        TableName: this.table,
        Key: keys.version(functionId, version),
        ConditionExpression: "code_token = :token",
        ExpressionAttributeValues: { ":token": token },
      }),
    );
    const parts = await this.queryAll(functionId, keys.codePrefix(version, token));
    await this.deleteKeys(parts.map((p) => ({ pk: p.pk, sk: p.sk })));
  }

  /**
   * Removes a version that was written before `createdBefore` and that no record points to
   * (the caller has just read the record's latest version, which is below it): the leftover
   * of an update whose writer died between writing the version and moving the record to it.
   * True when it was removed.
   */
  async removeAbandoned(functionId: string, version: number, createdBefore: Date): Promise<boolean> {
    let token: string;
    try {
      const { Attributes } = await this.doc.send(
        new DeleteCommand({
          TableName: this.table,
          Key: keys.version(functionId, version),
          ConditionExpression: "created_at < :cutoff",
          ExpressionAttributeValues: { ":cutoff": createdBefore.toISOString() },
          ReturnValues: "ALL_OLD",
        }),
      );
      if (!Attributes) return false;
      token = String(Attributes.code_token);
    } catch (error) {
      if (isConditionFailed(error)) return false;
      throw error;
    }
    const parts = await this.queryAll(functionId, keys.codePrefix(version, token));
    await this.deleteKeys(parts.map((p) => ({ pk: p.pk, sk: p.sk })));
    return true;
  }

  /**
   * Removes what interrupted writes left behind (a scan: local start-up only, when no write
   * is in flight): versions of functions that have no record (a create or a delete cut
   * short), versions past their function's latest (an update cut short), and code parts no
   * version item points to. `latest` maps each existing function_id to its latest version.
   * Returns how many items it removed.
   */
  async removeOrphans(latest: ReadonlyMap<string, number>): Promise<number> {
    const items = await scanAll(this.doc, {
      TableName: this.table,
      FilterExpression: "begins_with(pk, :fn) AND (begins_with(sk, :ver) OR begins_with(sk, :code))",
      ExpressionAttributeValues: { ":fn": "FNID#", ":ver": "VER#", ":code": "CODE#" },
      ProjectionExpression: "pk, sk, code_token",
    });
    const referenced = new Set<string>();
    const orphans: { pk: unknown; sk: unknown }[] = [];
    for (const item of items) {
      const [kind, padded] = String(item.sk).split("#");
      if (kind !== "VER") continue;
      const functionId = String(item.pk).slice("FNID#".length);
      const version = Number(padded);
      const newest = latest.get(functionId);
      if (newest === undefined || version > newest) orphans.push({ pk: item.pk, sk: item.sk });
      else referenced.add(`${String(item.pk)} ${keys.codePrefix(version, String(item.code_token))}`);
    }
    for (const item of items) {
      const [kind, padded, token] = String(item.sk).split("#");
      if (kind !== "CODE") continue;
      if (!referenced.has(`${String(item.pk)} ${keys.codePrefix(Number(padded), token)}`)) orphans.push({ pk: item.pk, sk: item.sk });
    }
    await this.deleteKeys(orphans);
    return orphans.length;
  }

  private queryAll(functionId: string, skPrefix: string): Promise<Record<string, unknown>[]> {
    return queryAll(this.doc, {
      TableName: this.table,
      KeyConditionExpression: "pk = :pk AND begins_with(sk, :prefix)",
      ExpressionAttributeValues: { ":pk": keys.version(functionId, 0).pk, ":prefix": skPrefix },
      ConsistentRead: true,
    });
  }

  private async writeAll(items: Record<string, unknown>[]): Promise<void> {
    for (const item of items) await this.doc.send(new PutCommand({ TableName: this.table, Item: item }));
  }

  private async deleteKeys(keyList: { pk: unknown; sk: unknown }[]): Promise<void> {
    for (let i = 0; i < keyList.length; i += 25) {
      let requests: Record<string, unknown>[] | undefined = keyList
        .slice(i, i + 25)
        .map((Key) => ({ DeleteRequest: { Key } }));
      while (requests && requests.length > 0) {
        const result = await this.doc.send(new BatchWriteCommand({ RequestItems: { [this.table]: requests } }));
        requests = result.UnprocessedItems?.[this.table] as Record<string, unknown>[] | undefined;
      }
    }
  }
}

/**
 * The version item, field by field (its code goes to part items): a version carrying `pk`,
 * `sk` or any other attribute never changes which item is written nor adds to it (STYLE.md,
 * rule 11). The key attributes come from the key builder alone.
 */
function versionToItem(version: VersionItem, token: string): Record<string, unknown> {
  const { pk, sk } = keys.version(version.function_id, version.version);
  const item: Record<string, unknown> = {
    pk,
    sk,
    function_id: version.function_id,
    version: version.version,
    created_at: version.created_at,
    code_sha256: version.code_sha256,
    variables: parametersToStored(version.variables),
    code_token: token,
  };
  if (version.parameter_style !== undefined) item.parameter_style = version.parameter_style;
  if (version.input_schema !== undefined) item.input_schema = schemaToText(version.input_schema);
  if (version.output_schema !== undefined) item.output_schema = schemaToText(version.output_schema);
  if (version.warnings !== undefined) item.warnings = copyWarnings(version.warnings);
  if (version.profile_names !== undefined) item.profile_names = version.profile_names.filter((name) => typeof name === "string");
  if (version.profile_writes !== undefined) item.profile_writes = version.profile_writes.filter((name) => typeof name === "string");
  return item;
}

/** A version from its stored item, field by field (without its code token or keys). */
function toVersion(stored: StoredVersion): VersionItem {
  const version: VersionItem = {
    function_id: stored.function_id,
    version: stored.version,
    created_at: stored.created_at,
    code_sha256: stored.code_sha256,
    variables: parametersFrom(stored.variables) ?? [],
  };
  if (stored.parameter_style !== undefined) version.parameter_style = stored.parameter_style;
  const input = schemaFromText<InputSchema>(stored.input_schema);
  if (input) version.input_schema = input;
  const output = schemaFromText(stored.output_schema);
  if (output) version.output_schema = output;
  if (Array.isArray(stored.warnings)) version.warnings = copyWarnings(stored.warnings);
  if (Array.isArray(stored.profile_names)) version.profile_names = stored.profile_names.filter((name): name is string => typeof name === "string");
  if (Array.isArray(stored.profile_writes)) version.profile_writes = stored.profile_writes.filter((name): name is string => typeof name === "string");
  return version;
}
