import { GetCommand, PutCommand, UpdateCommand } from "@aws-sdk/lib-dynamodb";
import { isConditionFailed, sendConditional, type DocumentSender } from "./dynamo";
import { asStored } from "./keys";

/**
 * What an account holds, in one item (`ACCOUNT#<account>` / `STORAGE`) changed only by single
 * conditional writes (dynalite has no transactions): `held`, the bytes it holds, and
 * `expiring`, the same bytes by the UTC day they expire on (`YYYY-MM-DD` → bytes).
 *
 * Whatever is kept (an artifact, a run's params, result and logs; a profile when profiles come:
 * they call `reserve` or `add` with their own expiry, or `Infinity` for none) is counted with
 * its expiry, the same `expires_at` its items carry. A day that has passed is taken out of
 * `held` by the next write or read, so the count falls when DynamoDB's TTL (AWS) or the local
 * sweep removes the items, without either telling this store. Something removed before its
 * expiry (an artifact saved again under its name) is given back with `release`.
 */
export interface StorageItem {
  held?: number;
  expiring?: Record<string, number>;
}

const storageKey = (accountId: string) => ({ pk: `ACCOUNT#${accountId}`, sk: "STORAGE" });
const ATTEMPTS = 8;
/** Passed days taken out per write at most (an expression's size is bounded). */
const DAYS_PER_WRITE = 50;
/** The day key of what never expires (sorts after every date). */
const NEVER = "never";

/** The UTC day an expiry (epoch seconds) falls on; what has no expiry counts for ever. */
export function expiryDay(expiresAt: number): string {
  return Number.isFinite(expiresAt) ? new Date(expiresAt * 1000).toISOString().slice(0, 10) : NEVER;
}

export class StorageStore {
  constructor(
    private readonly doc: DocumentSender,
    private readonly table: string,
  ) {}

  /**
   * Counts `bytes` kept until `expiresAt` (epoch seconds) if the account then holds at most
   * `capBytes`; false (nothing counted) when it would hold more.
   */
  async reserve(accountId: string, bytes: number, expiresAt: number, capBytes: number, now: Date): Promise<boolean> {
    return this.count(accountId, bytes, expiresAt, capBytes, now);
  }

  /** Counts `bytes` kept until `expiresAt` whatever the cap (a run's record: kept once the run ended). */
  async add(accountId: string, bytes: number, expiresAt: number, now: Date): Promise<void> {
    await this.count(accountId, bytes, expiresAt, Infinity, now);
  }

  /** Gives back `bytes` counted until `expiresAt`, removed before then; nothing when that day has passed already. */
  async release(accountId: string, bytes: number, expiresAt: number): Promise<void> {
    const n = Math.round(bytes);
    if (!(n > 0)) return;
    await sendConditional(
      this.doc,
      new UpdateCommand({
        TableName: this.table,
        Key: storageKey(accountId),
        UpdateExpression: "SET held = held - :n, expiring.#day = expiring.#day - :n",
        ConditionExpression: "expiring.#day >= :n",
        ExpressionAttributeNames: { "#day": expiryDay(expiresAt) },
        ExpressionAttributeValues: { ":n": n },
      }),
    );
  }

  /** The bytes the account holds now (what has expired left out). */
  async held(accountId: string, now: Date): Promise<number> {
    const item = await this.read(accountId);
    if (!item) return 0;
    const passed = passedDays(item, now);
    if (passed.length > 0) await this.removeDays(accountId, passed.slice(0, DAYS_PER_WRITE));
    return Math.max(0, (item.held ?? 0) - passed.reduce((sum, [, bytes]) => sum + bytes, 0));
  }

  private async count(accountId: string, bytes: number, expiresAt: number, capBytes: number, now: Date): Promise<boolean> {
    const n = Math.round(bytes);
    if (!(n > 0)) return true;
    const capped = Number.isFinite(capBytes);
    for (let attempt = 0; attempt < ATTEMPTS; attempt++) {
      try {
        await this.doc.send(
          new UpdateCommand({
            TableName: this.table,
            Key: storageKey(accountId),
            UpdateExpression: "SET held = held + :n, expiring.#day = if_not_exists(expiring.#day, :zero) + :n",
            ConditionExpression: capped ? "attribute_exists(expiring) AND held <= :room" : "attribute_exists(expiring)",
            ExpressionAttributeNames: { "#day": expiryDay(expiresAt) },
            ExpressionAttributeValues: { ":n": n, ":zero": 0, ...(capped ? { ":room": capBytes - n } : {}) },
          }),
        );
        return true;
      } catch (error) {
        if (!isConditionFailed(error)) throw error;
      }
      const item = await this.read(accountId);
      if (!item?.expiring) {
        await this.putIfMissing(accountId);
        continue;
      }
      const passed = passedDays(item, now);
      if (passed.length > 0) {
        await this.removeDays(accountId, passed.slice(0, DAYS_PER_WRITE));
        continue;
      }
      if ((item.held ?? 0) + n > capBytes) return false;
    }
    throw new Error(`Could not count storage for ${accountId}: too much contention`);
  }

  private async read(accountId: string): Promise<StorageItem | undefined> {
    const { Item } = await this.doc.send(new GetCommand({ TableName: this.table, Key: storageKey(accountId), ConsistentRead: true }));
    if (!Item) return undefined;
    const { held, expiring } = asStored<StorageItem>(Item);
    return { held, expiring };
  }

  private async putIfMissing(accountId: string): Promise<void> {
    await sendConditional(
      this.doc,
      new PutCommand({
        TableName: this.table,
        Item: { ...storageKey(accountId), held: 0, expiring: {} },
        ConditionExpression: "attribute_not_exists(pk)",
      }),
    );
  }

  /** Takes passed days out of `held`, each only if it still holds what was read (else the next write tries again). */
  private async removeDays(accountId: string, days: [string, number][]): Promise<void> {
    const names = Object.fromEntries(days.map(([day], i) => [`#d${i}`, day]));
    const values = Object.fromEntries(days.map(([, bytes], i) => [`:v${i}`, bytes]));
    const total = days.reduce((sum, [, bytes]) => sum + bytes, 0);
    await sendConditional(
      this.doc,
      new UpdateCommand({
        TableName: this.table,
        Key: storageKey(accountId),
        UpdateExpression: `SET held = held - :total REMOVE ${days.map((_, i) => `expiring.#d${i}`).join(", ")}`,
        ConditionExpression: days.map((_, i) => `expiring.#d${i} = :v${i}`).join(" AND "),
        ExpressionAttributeNames: names,
        ExpressionAttributeValues: { ...values, ":total": total },
      }),
    );
  }
}

/** Days of the item that ended before `now`'s day began: all they held has expired. */
function passedDays(item: StorageItem, now: Date): [string, number][] {
  const today = now.toISOString().slice(0, 10);
  return Object.entries(item.expiring ?? {})
    .filter(([day]) => day !== NEVER && day < today)
    .map(([day, bytes]) => [day, Number(bytes)]);
}
