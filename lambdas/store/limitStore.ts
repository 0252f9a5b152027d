import { GetCommand, PutCommand, UpdateCommand } from "@aws-sdk/lib-dynamodb";
import { isConditionFailed, sendConditional, type DocumentSender } from "./dynamo";
import { asStored } from "./keys";

export interface AdmitLimits {
  concurrency: number;
  invocationsPerMonth: number;
}

export type Reservation = { reserved: true } | { reserved: false; used: number };

export type Admission = { admitted: true } | { admitted: false; limit: "concurrency" | "quota"; inFlight: number; used: number };

interface LimitItem {
  leases?: Record<string, number>;
  month_key?: string;
  invocations?: number;
}

const limitKey = (accountId: string) => ({ pk: `ACCOUNT#${accountId}`, sk: "LIMITS" });
const ATTEMPTS = 8;

/**
 * An account's runs in flight and invocations this month, in one item changed only by
 * conditional writes, so no two services sharing the store can admit more than the plan allows.
 * Each run in flight holds a lease (run id → expiry); a run whose service died frees its
 * slot when its lease expires.
 */
export class LimitStore {
  constructor(
    private readonly doc: DocumentSender,
    private readonly table: string,
  ) {}

  /**
   * Takes a lease and counts one invocation of this month, both or neither. `counted`: the
   * invocation was counted already (reserveInvocations, for an item of a batch): only the lease
   * is taken, and the quota is not checked again.
   */
  async admit(accountId: string, leaseId: string, limits: AdmitLimits, leaseUntil: number, now: Date, counted = false): Promise<Admission> {
    const month = now.toISOString().slice(0, 7);
    for (let attempt = 0; attempt < ATTEMPTS; attempt++) {
      try {
        await this.doc.send(
          new UpdateCommand({
            TableName: this.table,
            Key: limitKey(accountId),
            UpdateExpression: counted ? "SET leases.#lease = :until" : "SET leases.#lease = :until ADD invocations :one",
            ConditionExpression: counted ? "month_key = :month AND size(leases) < :concurrency" : "month_key = :month AND size(leases) < :concurrency AND invocations < :quota",
            ExpressionAttributeNames: { "#lease": leaseId },
            ExpressionAttributeValues: {
              ":until": leaseUntil,
              ":month": month,
              ":concurrency": limits.concurrency,
              ...(counted ? {} : { ":one": 1, ":quota": limits.invocationsPerMonth }),
            },
          }),
        );
        return { admitted: true };
      } catch (error) {
        if (!isConditionFailed(error)) throw error;
      }
      const item = await this.read(accountId);
      if (!item) {
        await this.putIfMissing(accountId, month);
        continue;
      }
      if (item.month_key !== month) {
        await this.startMonth(accountId, item.month_key, month);
        continue;
      }
      const leases = item.leases ?? {};
      const expired = Object.entries(leases).filter(([, until]) => until <= now.getTime());
      if (expired.length > 0) {
        await this.removeLeases(accountId, expired);
        continue;
      }
      const used = item.invocations ?? 0;
      const inFlight = Object.keys(leases).length;
      if (!counted && used >= limits.invocationsPerMonth) return { admitted: false, limit: "quota", inFlight, used };
      if (inFlight >= limits.concurrency) return { admitted: false, limit: "concurrency", inFlight, used };
    }
    throw new Error(`Could not admit a run for ${accountId}: too much contention`);
  }

  /**
   * Counts `n` invocations of this month at once, or none: one conditional write, so batches
   * and single calls racing for the same quota never together pass `quota`. No lease is taken
   * (each run takes its own when it starts: admit with `counted`).
   */
  async reserveInvocations(accountId: string, n: number, quota: number, now: Date): Promise<Reservation> {
    const month = now.toISOString().slice(0, 7);
    if (n > quota) return { reserved: false, used: (await this.current(accountId, now)).invocations };
    for (let attempt = 0; attempt < ATTEMPTS; attempt++) {
      try {
        await this.doc.send(
          new UpdateCommand({
            TableName: this.table,
            Key: limitKey(accountId),
            UpdateExpression: "ADD invocations :n",
            ConditionExpression: "month_key = :month AND invocations <= :room",
            ExpressionAttributeValues: { ":n": n, ":month": month, ":room": quota - n },
          }),
        );
        return { reserved: true };
      } catch (error) {
        if (!isConditionFailed(error)) throw error;
      }
      const item = await this.read(accountId);
      if (!item) {
        await this.putIfMissing(accountId, month);
        continue;
      }
      if (item.month_key !== month) {
        await this.startMonth(accountId, item.month_key, month);
        continue;
      }
      return { reserved: false, used: item.invocations ?? 0 };
    }
    throw new Error(`Could not reserve ${n} invocations for ${accountId}: too much contention`);
  }

  /** Gives back `n` invocations counted by reserveInvocations whose runs will never start. */
  async unreserveInvocations(accountId: string, n: number): Promise<void> {
    await this.doc.send(
      new UpdateCommand({
        TableName: this.table,
        Key: limitKey(accountId),
        UpdateExpression: "ADD invocations :minus",
        ConditionExpression: "attribute_exists(pk)",
        ExpressionAttributeValues: { ":minus": -n },
      }),
    );
  }

  /**
   * Gives a lease back (its run ended); `refund` also uncounts the invocation (it never started).
   * A lease no longer held (released already, or expired) is left alone: releasing twice is safe.
   */
  async release(accountId: string, leaseId: string, refund = false): Promise<void> {
    await sendConditional(
      this.doc,
      new UpdateCommand({
        TableName: this.table,
        Key: limitKey(accountId),
        UpdateExpression: refund ? "REMOVE leases.#lease ADD invocations :minus" : "REMOVE leases.#lease",
        ConditionExpression: "attribute_exists(leases.#lease)",
        ExpressionAttributeNames: { "#lease": leaseId },
        ...(refund ? { ExpressionAttributeValues: { ":minus": -1 } } : {}),
      }),
    );
  }

  /** True when the account holds a lease for this run (it was admitted and has not ended). */
  async holds(accountId: string, leaseId: string): Promise<boolean> {
    const item = await this.read(accountId);
    return item?.leases?.[leaseId] !== undefined;
  }

  /** The ids of the leases the account holds (expired ones included). */
  async leaseIds(accountId: string): Promise<string[]> {
    return Object.keys((await this.read(accountId))?.leases ?? {});
  }

  /** Invocations admitted this month and runs in flight now. */
  async current(accountId: string, now: Date): Promise<{ invocations: number; inFlight: number }> {
    const item = await this.read(accountId);
    const sameMonth = item?.month_key === now.toISOString().slice(0, 7);
    const live = Object.values(item?.leases ?? {}).filter((until) => until > now.getTime());
    return { invocations: sameMonth ? (item?.invocations ?? 0) : 0, inFlight: live.length };
  }

  private async read(accountId: string): Promise<LimitItem | undefined> {
    const { Item } = await this.doc.send(new GetCommand({ TableName: this.table, Key: limitKey(accountId), ConsistentRead: true }));
    if (!Item) return undefined;
    const { leases, month_key, invocations } = asStored<LimitItem>(Item);
    return { leases, month_key, invocations };
  }

  private async putIfMissing(accountId: string, month: string): Promise<void> {
    const key = limitKey(accountId);
    await sendConditional(
      this.doc,
      new PutCommand({
        TableName: this.table,
        Item: { pk: key.pk, sk: key.sk, leases: {}, month_key: month, invocations: 0 },
        ConditionExpression: "attribute_not_exists(pk)",
      }),
    );
  }

  /** A new month: the invocation count starts again (leases carry over). */
  private async startMonth(accountId: string, previous: string | undefined, month: string): Promise<void> {
    await sendConditional(
      this.doc,
      new UpdateCommand({
        TableName: this.table,
        Key: limitKey(accountId),
        UpdateExpression: "SET month_key = :month, invocations = :zero",
        ConditionExpression: previous === undefined ? "attribute_not_exists(month_key)" : "month_key = :previous",
        ExpressionAttributeValues: { ":month": month, ":zero": 0, ...(previous === undefined ? {} : { ":previous": previous }) },
      }),
    );
  }

  private async removeLeases(accountId: string, expired: [string, number][]): Promise<void> {
    const names = Object.fromEntries(expired.map(([id], i) => [`#l${i}`, id]));
    const values = Object.fromEntries(expired.map(([, until], i) => [`:u${i}`, until]));
    await sendConditional(
      this.doc,
      new UpdateCommand({
        TableName: this.table,
        Key: limitKey(accountId),
        UpdateExpression: `REMOVE ${expired.map((_, i) => `leases.#l${i}`).join(", ")}`,
        ConditionExpression: expired.map((_, i) => `leases.#l${i} = :u${i}`).join(" AND "),
        ExpressionAttributeNames: names,
        ExpressionAttributeValues: values,
      }),
    );
  }
}
