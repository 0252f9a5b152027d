import { DeleteCommand, GetCommand, PutCommand } from "@aws-sdk/lib-dynamodb";
import { sendConditional, type DocumentSender } from "./dynamo";

/** One stored secret: its value sealed (SecretBox), never in the clear. */
export interface StoredSecret {
  name: string;
  sealed: string;
  updated_at: string;
}

const secretsKey = (functionId: string) => ({ pk: `FNID#${functionId}`, sk: "SECRETS" });

/** What `put` and `remove` say when the function's secrets changed under them too often to apply the change. */
const MAX_ATTEMPTS = 8;

/**
 * A function's secrets: one item per function (its secrets by name, each sealed), so a run
 * reads them all with one GetItem. Changes are optimistic: read, change, write if the item's
 * `revision` is still the one read; concurrent changes retry, so none is lost and the cap holds.
 */
export class SecretStore {
  constructor(
    private readonly doc: DocumentSender,
    private readonly table: string,
  ) {}

  /** The function's secrets, in name order. */
  async list(functionId: string): Promise<StoredSecret[]> {
    return (await this.read(functionId)).secrets;
  }

  /**
   * Sets `secret` (a new one, or a new value): false, and nothing written, when it is new and
   * the function holds `max` already.
   */
  async put(functionId: string, secret: StoredSecret, max: number): Promise<boolean> {
    return this.change(functionId, (secrets) => {
      const others = secrets.filter((item) => item.name !== secret.name);
      if (others.length === secrets.length && secrets.length >= max) return null;
      return [...others, { name: secret.name, sealed: secret.sealed, updated_at: secret.updated_at }];
    }).then((changed) => changed !== "refused");
  }

  /** Removes one secret: false when the function has none of that name. */
  async remove(functionId: string, name: string): Promise<boolean> {
    return this.change(functionId, (secrets) => (secrets.some((item) => item.name === name) ? secrets.filter((item) => item.name !== name) : null)).then(
      (changed) => changed !== "refused",
    );
  }

  /** Removes every secret of a deleted function. */
  async removeAll(functionId: string): Promise<void> {
    await this.doc.send(new DeleteCommand({ TableName: this.table, Key: secretsKey(functionId) }));
  }

  private async read(functionId: string): Promise<{ secrets: StoredSecret[]; revision: number }> {
    const { Item } = await this.doc.send(new GetCommand({ TableName: this.table, Key: secretsKey(functionId), ConsistentRead: true }));
    if (!Item) return { secrets: [], revision: 0 };
    const stored = Array.isArray(Item.secrets) ? (Item.secrets as Record<string, unknown>[]) : [];
    const secrets = stored.map((item) => ({ name: String(item.name), sealed: String(item.sealed), updated_at: String(item.updated_at) }));
    return { secrets: secrets.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0)), revision: Number(Item.revision) || 0 };
  }

  /** Applies `edit` (null: refused, nothing to write) with optimistic concurrency on `revision`. */
  private async change(functionId: string, edit: (secrets: StoredSecret[]) => StoredSecret[] | null): Promise<"changed" | "refused"> {
    for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
      const { secrets, revision } = await this.read(functionId);
      const next = edit(secrets);
      if (next === null) return "refused";
      const written = await sendConditional(
        this.doc,
        new PutCommand({
          TableName: this.table,
          Item: { ...secretsKey(functionId), secrets: next, revision: revision + 1 },
          ConditionExpression: revision === 0 ? "attribute_not_exists(pk)" : "revision = :revision",
          ...(revision === 0 ? {} : { ExpressionAttributeValues: { ":revision": revision } }),
        }),
      );
      if (written) return "changed";
    }
    throw new Error(`The secrets of ${functionId} changed too often meanwhile; try again`);
  }
}
