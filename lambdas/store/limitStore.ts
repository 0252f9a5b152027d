import { DeleteCommand, GetCommand, PutCommand, UpdateCommand } from "@aws-sdk/lib-dynamodb";
import { isConditionFailed, sendConditional, type DocumentSender } from "./dynamo";
import { asStored } from "./keys";

export interface AdmitLimits {
  concurrency: number;
  invocationsPerMonth: number;
  /** The invocation was counted already (a batch reserves its items' invocations at once): take the lease only. */
  counted?: boolean;
}

export type Reservation = { reserved: true } | { reserved: false; used: number };

/**
 * `concurrency`: every slot is taken; `queue`: runs of the account are queued (a new run must
 * not start ahead of them); `quota`: the month's invocations are used up.
 */
export type Admission = { admitted: true } | { admitted: false; limit: "concurrency" | "queue" | "quota"; inFlight: number; used: number };

export interface LimitItem {
  leases?: Record<string, number>;
  month_key?: string;
  invocations?: number;
  /** Runs of the account waiting in its run queue (lambdas/queue). */
  queued?: number;
  /** The function the run queue served last (round-robin between functions). */
  rr_cursor?: string;
}

/**
 * The LIMITS item has a partition of its own: every admission, release and queue step writes
 * it, and in the account's `ACCOUNT#` partition (its record, functions and usage) those writes
 * shared one partition's throughput with the account's whole API (#23.6).
 */
export const limitKey = (accountId: string) => ({ pk: `LIMITS#${accountId}`, sk: "LIMITS" });
/** Where the LIMITS item was kept before it had a partition of its own: moved on first use (see read). */
export const legacyLimitKey = (accountId: string) => ({ pk: `ACCOUNT#${accountId}`, sk: "LIMITS" });
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
   * Takes a lease and counts one invocation of this month, both or neither (a `counted` run: the
   * lease only). Never ahead of the account's queued runs: the same write requires `queued` to be 0.
   */
  async admit(accountId: string, leaseId: string, limits: AdmitLimits, leaseUntil: number, now: Date): Promise<Admission> {
    const month = now.toISOString().slice(0, 7);
    const counted = limits.counted === true;
    for (let attempt = 0; attempt < ATTEMPTS; attempt++) {
      try {
        await this.doc.send(
          new UpdateCommand({
            TableName: this.table,
            Key: limitKey(accountId),
            UpdateExpression: counted ? "SET leases.#lease = :until" : "SET leases.#lease = :until ADD invocations :one",
            ConditionExpression: `month_key = :month AND size(leases) < :concurrency${counted ? "" : " AND invocations < :quota"} AND (attribute_not_exists(queued) OR queued <= :zero)`,
            ExpressionAttributeNames: { "#lease": leaseId },
            ExpressionAttributeValues: {
              ":until": leaseUntil,
              ":month": month,
              ":concurrency": limits.concurrency,
              ":zero": 0,
              ...(counted ? {} : { ":one": 1, ":quota": limits.invocationsPerMonth }),
            },
          }),
        );
        return { admitted: true };
      } catch (error) {
        if (!isConditionFailed(error)) throw error;
      }
      const item = await this.readInMonth(accountId, month);
      if (!item || (await this.removeExpired(accountId, item, now))) continue;
      const leases = item.leases ?? {};
      const used = item.invocations ?? 0;
      const inFlight = Object.keys(leases).length;
      if (!counted && used >= limits.invocationsPerMonth) return { admitted: false, limit: "quota", inFlight, used };
      if (inFlight >= limits.concurrency) return { admitted: false, limit: "concurrency", inFlight, used };
      if ((item.queued ?? 0) > 0) return { admitted: false, limit: "queue", inFlight, used };
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
      const item = await this.readInMonth(accountId, month);
      if (item) return { reserved: false, used: item.invocations ?? 0 };
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
  async release(accountId: string, leaseId: string, refund = false): Promise<{ queued: number; item?: LimitItem }> {
    return this.releaseLease(accountId, leaseId, refund, false);
  }

  private async releaseLease(accountId: string, leaseId: string, refund: boolean, moved: boolean): Promise<{ queued: number; item?: LimitItem }> {
    try {
      const { Attributes } = await this.doc.send(
        new UpdateCommand({
          TableName: this.table,
          Key: limitKey(accountId),
          UpdateExpression: refund ? "REMOVE leases.#lease ADD invocations :minus" : "REMOVE leases.#lease",
          ConditionExpression: "attribute_exists(leases.#lease)",
          ExpressionAttributeNames: { "#lease": leaseId },
          ...(refund ? { ExpressionAttributeValues: { ":minus": -1 } } : {}),
          // What the run queue needs to know whether a run waits for this slot: no read of its own.
          ReturnValues: "ALL_NEW",
        }),
      );
      if (!Attributes) return { queued: 0 };
      const { leases, month_key, invocations, queued, rr_cursor } = asStored<LimitItem>(Attributes);
      return { queued: typeof queued === "number" ? queued : 0, item: { leases, month_key, invocations, queued, rr_cursor } };
    } catch (error) {
      if (!isConditionFailed(error)) throw error;
      // A lease taken before the LIMITS item moved to its own key is released from there.
      if (!moved && (await this.moveLegacy(accountId, null))) return this.releaseLease(accountId, leaseId, refund, true);
      return { queued: 0 };
    }
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

  /** The account's limits item as it is now (consistent read). */
  async read(accountId: string): Promise<LimitItem | undefined> {
    const { Item } = await this.doc.send(new GetCommand({ TableName: this.table, Key: limitKey(accountId), ConsistentRead: true }));
    return Item ? limitFields(Item) : undefined;
  }

  /** Makes sure the account's limits item exists and is of this month (before a write that requires it). */
  async ensureMonth(accountId: string, now: Date): Promise<LimitItem> {
    const month = now.toISOString().slice(0, 7);
    for (let attempt = 0; attempt < ATTEMPTS; attempt++) {
      const item = await this.readInMonth(accountId, month);
      if (item) return item;
    }
    throw new Error(`Could not read the limits of ${accountId}: too much contention`);
  }

  /**
   * The account's LIMITS item when it counts `month` already; otherwise makes it so (creates the
   * item, or starts the month) and gives undefined: the caller reads again.
   */
  private async readInMonth(accountId: string, month: string): Promise<LimitItem | undefined> {
    const item = await this.read(accountId);
    if (!item) await this.putIfMissing(accountId, month);
    else if (item.month_key !== month) await this.startMonth(accountId, item.month_key, month);
    else return item;
    return undefined;
  }

  /** Removes the leases that expired by `now` (their services died); true when some did. */
  async removeExpired(accountId: string, item: LimitItem, now: Date): Promise<boolean> {
    const expired = Object.entries(item.leases ?? {}).filter(([, until]) => until <= now.getTime());
    if (expired.length === 0) return false;
    await this.removeLeases(accountId, expired);
    return true;
  }

  /** Creates the account's LIMITS item (empty, or moved from its legacy key: moveLegacy). */
  private async putIfMissing(accountId: string, month: string): Promise<void> {
    if (await this.moveLegacy(accountId, month)) return;
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

  /**
   * For an account whose LIMITS item is still at its legacy key (written before LIMITS had a
   * partition of its own): creates the item at its key with a copy of the legacy item's fields
   * (its leases, this month's count, its queue counters and sweep marker), then deletes the
   * legacy item. Leases and counts carry over, so no plan limit is lost to the move. False when
   * there was no legacy item.
   */
  private async moveLegacy(accountId: string, month: string | null): Promise<boolean> {
    const { Item: legacy } = await this.doc.send(new GetCommand({ TableName: this.table, Key: legacyLimitKey(accountId), ConsistentRead: true }));
    if (!legacy) return false;
    const moved = limitFields(legacy);
    const key = limitKey(accountId);
    const marker = typeof legacy.gsi1pk === "string" && typeof legacy.gsi1sk === "string" ? { gsi1pk: legacy.gsi1pk, gsi1sk: legacy.gsi1sk } : {};
    const item = {
      pk: key.pk,
      sk: key.sk,
      leases: moved.leases ?? {},
      invocations: moved.invocations ?? 0,
      ...(moved.month_key !== undefined ? { month_key: moved.month_key } : month !== null ? { month_key: month } : {}),
      ...(moved.queued === undefined ? {} : { queued: moved.queued }),
      ...(moved.rr_cursor === undefined ? {} : { rr_cursor: moved.rr_cursor }),
      ...marker,
    };
    await sendConditional(this.doc, new PutCommand({ TableName: this.table, Item: item, ConditionExpression: "attribute_not_exists(pk)" }));
    await this.doc.send(new DeleteCommand({ TableName: this.table, Key: legacyLimitKey(accountId) }));
    return true;
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

/** The LIMITS fields of a stored item, by name (never the item itself). */
function limitFields(stored: Record<string, unknown>): LimitItem {
  const { leases, month_key, invocations, queued, rr_cursor } = asStored<LimitItem>(stored);
  const validLeases = leases && typeof leases === "object" ? Object.fromEntries(Object.entries(leases).filter(([, until]) => typeof until === "number")) : undefined;
  return {
    leases: validLeases,
    month_key: typeof month_key === "string" ? month_key : undefined,
    invocations: typeof invocations === "number" ? invocations : undefined,
    queued: typeof queued === "number" ? queued : undefined,
    rr_cursor: typeof rr_cursor === "string" ? rr_cursor : undefined,
  };
}
