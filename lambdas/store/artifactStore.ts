import { DeleteCommand, GetCommand, PutCommand } from "@aws-sdk/lib-dynamodb";
import { type ArtifactItem, DEFAULT_ARTIFACT_RETENTION_DAYS, isArtifactName } from "../artifacts/artifacts";
import { queryAll, sendConditional, type DocumentSender } from "./dynamo";
import { asStored } from "./keys";

const artifactKey = (runId: string, name: string) => ({ pk: `RUN#${runId}`, sk: `ART#${name}` });

/** An artifact from its item, field by field. */
function itemToArtifact(item: Record<string, unknown>): ArtifactItem {
  const stored = asStored<ArtifactItem>(item);
  return {
    run_id: String(stored.run_id),
    account_id: String(stored.account_id),
    function_id: String(stored.function_id),
    name: String(stored.name),
    content_type: String(stored.content_type),
    bytes: Number(stored.bytes),
    created_at: String(stored.created_at),
    ...(Number.isInteger(stored.attempt) && Number(stored.attempt) > 1 ? { attempt: Number(stored.attempt) } : {}),
  };
}

/**
 * The artifacts of runs: one item per file beside the run's item (`RUN#<run_id>`,
 * `ART#<name>`), its bytes elsewhere (files under the data dir locally, S3 on AWS). Items expire
 * after the artifact retention (DynamoDB TTL on AWS; the local sweep removes the files).
 */
export class ArtifactStore {
  constructor(
    private readonly doc: DocumentSender,
    private readonly table: string,
    readonly retentionDays: number = DEFAULT_ARTIFACT_RETENTION_DAYS,
  ) {}

  /** Records an artifact (the same name again replaces it), built field by field. */
  async put(artifact: ArtifactItem): Promise<void> {
    await this.doc.send(new PutCommand({ TableName: this.table, Item: this.toItem(artifact) }));
  }

  /** Records an artifact unless the run has one of that name already (a retried recorder); true when it was new. */
  async putIfAbsent(artifact: ArtifactItem): Promise<boolean> {
    return sendConditional(this.doc, new PutCommand({ TableName: this.table, Item: this.toItem(artifact), ConditionExpression: "attribute_not_exists(pk)" }));
  }

  /** When an artifact created at `createdAt` expires (epoch seconds; its item's `expires_at`). */
  expiryOf(createdAt: string): number {
    return Math.floor(Date.parse(createdAt) / 1000) + this.retentionDays * 86_400;
  }

  private toItem(artifact: ArtifactItem): Record<string, unknown> {
    if (!isArtifactName(artifact.name)) throw new Error(`not an artifact name: ${String(artifact.name).slice(0, 140)}`);
    const item = {
      run_id: artifact.run_id,
      account_id: artifact.account_id,
      function_id: artifact.function_id,
      name: artifact.name,
      content_type: artifact.content_type,
      bytes: artifact.bytes,
      created_at: artifact.created_at,
      ...(Number.isInteger(artifact.attempt) && Number(artifact.attempt) > 1 ? { attempt: artifact.attempt } : {}),
      expires_at: this.expiryOf(artifact.created_at),
      ...artifactKey(artifact.run_id, artifact.name),
    };
    return item;
  }

  /** A run's artifacts in name order (expired ones left out). */
  async list(runId: string, now = new Date()): Promise<ArtifactItem[]> {
    const items = await queryAll(this.doc, {
      TableName: this.table,
      KeyConditionExpression: "pk = :pk AND begins_with(sk, :prefix)",
      ExpressionAttributeValues: { ":pk": `RUN#${runId}`, ":prefix": "ART#" },
    });
    return items.filter((item) => !expired(item, now)).map(itemToArtifact);
  }

  /**
   * Removes a run's artifact items, expired or not (the local sweep, once the files are gone:
   * dynalite has no TTL, so without it the items would stay for ever). Returns how many.
   */
  async removeRun(runId: string): Promise<number> {
    const items = await queryAll(this.doc, {
      TableName: this.table,
      KeyConditionExpression: "pk = :pk AND begins_with(sk, :prefix)",
      ExpressionAttributeValues: { ":pk": `RUN#${runId}`, ":prefix": "ART#" },
    });
    for (const item of items) await this.doc.send(new DeleteCommand({ TableName: this.table, Key: { pk: item.pk, sk: item.sk } }));
    return items.length;
  }

  async get(runId: string, name: string, now = new Date()): Promise<ArtifactItem | undefined> {
    if (!isArtifactName(name)) return undefined;
    const { Item } = await this.doc.send(new GetCommand({ TableName: this.table, Key: artifactKey(runId, name), ConsistentRead: true }));
    return Item && !expired(Item, now) ? itemToArtifact(Item) : undefined;
  }
}

/** DynamoDB's TTL deletes within days, dynalite never: an expired item is as good as gone. */
function expired(item: Record<string, unknown>, now: Date): boolean {
  return typeof item.expires_at === "number" && item.expires_at * 1000 <= now.getTime();
}
