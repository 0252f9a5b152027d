import { UpdateCommand } from "@aws-sdk/lib-dynamodb";
import { queryAll, type DocumentSender } from "./dynamo";
import { nextTurn } from "../runs/nextTurn";
import type { RunItem } from "../runs/types";
import type { StorageStore } from "./storageStore";

export interface UsageCounters {
  invocations: number;
  execution_ms: number;
  /** memory_mb × execution ms (GB-seconds = mb_ms / 1024 / 1000). */
  mb_ms: number;
  browser_ms: number;
  /** Bytes of artifacts the runs kept. */
  artifact_bytes: number;
}

export interface FunctionCounters extends UsageCounters {
  succeeded: number;
  failed: number;
  timed_out: number;
  schedule_skips: number;
  last_called_at: string | null;
}

/**
 * One item per function and month (`ACCOUNT#<account>` / `USAGE#<month>#<function_id>`,
 * indexed by function in gsi1): every run adds to it with one DynamoDB ADD. An account's
 * usage is the sum of its items for a month; a function's metrics the sum over its months.
 */
const usageKey = (accountId: string, month: string, functionId: string) => ({
  pk: `ACCOUNT#${accountId}`,
  sk: `USAGE#${month}#${functionId}`,
  gsi1pk: `FNID#${functionId}#USAGE`,
  gsi1sk: month,
});

export class MeterStore {
  private readonly pending = new Set<Promise<void>>();

  constructor(
    private readonly doc: DocumentSender,
    private readonly table: string,
    /** Where a run's record (params, result, logs) is counted against the account's storage, until it expires. */
    private readonly storage?: { store: StorageStore; runRetentionSeconds: number },
  ) {}

  /**
   * Counts one finished run in its function's usage of the month the run started in, and the
   * bytes of its record (params, result, logs) in what its account holds until the record
   * expires (as RunStore sets `expires_at`: queued_at + the run retention).
   */
  async recordRun(run: RunItem): Promise<void> {
    if (this.storage) {
      const expiresAt = Math.floor(Date.parse(run.queued_at) / 1000) + this.storage.runRetentionSeconds;
      await this.storage.store.add(run.account_id, runRecordBytes(run), expiresAt, new Date());
    }
    const duration = run.duration_ms ?? 0;
    const outcome = run.status === "succeeded" || run.status === "timed_out" || run.status === "canceled" ? run.status : "failed";
    const { pk, sk, gsi1pk, gsi1sk } = usageKey(run.account_id, run.queued_at.slice(0, 7), run.function_id);
    await this.doc.send(
      new UpdateCommand({
        TableName: this.table,
        Key: { pk, sk },
        UpdateExpression:
          `ADD invocations :one, ${outcome} :one, execution_ms :duration, mb_ms :mbms, browser_ms :browser ` +
          "SET function_id = :fn, gsi1pk = :gpk, gsi1sk = :gsk, last_called_at = :at",
        ExpressionAttributeValues: {
          ":one": 1,
          ":duration": duration,
          ":mbms": duration * run.memory_mb,
          ":browser": run.browser_ms,
          ":fn": run.function_id,
          ":gpk": gsi1pk,
          ":gsk": gsi1sk,
          ":at": run.queued_at,
        },
      }),
    );
  }

  /**
   * Counts the execution of a run's attempt that is retried (lambdas/retries): its time, memory
   * and browser time, not an invocation (the run's final end counts that, once).
   */
  async recordAttempt(run: RunItem, ended: { duration_ms: number; browser_ms: number }): Promise<void> {
    const duration = Math.max(0, ended.duration_ms);
    const { pk, sk, gsi1pk, gsi1sk } = usageKey(run.account_id, run.queued_at.slice(0, 7), run.function_id);
    await this.doc.send(
      new UpdateCommand({
        TableName: this.table,
        Key: { pk, sk },
        UpdateExpression: "ADD execution_ms :duration, mb_ms :mbms, browser_ms :browser SET function_id = :fn, gsi1pk = :gpk, gsi1sk = :gsk",
        ExpressionAttributeValues: {
          ":duration": duration,
          ":mbms": duration * run.memory_mb,
          ":browser": Math.max(0, ended.browser_ms),
          ":fn": run.function_id,
          ":gpk": gsi1pk,
          ":gsk": gsi1sk,
        },
      }),
    );
  }

  /** Counts a scheduled firing skipped because the previous scheduled run was still going. */
  async recordSkip(fn: { account_id: string; function_id: string }, scheduledFor: string): Promise<void> {
    const { pk, sk, gsi1pk, gsi1sk } = usageKey(fn.account_id, scheduledFor.slice(0, 7), fn.function_id);
    await this.doc.send(
      new UpdateCommand({
        TableName: this.table,
        Key: { pk, sk },
        UpdateExpression: "ADD schedule_skips :one SET function_id = :fn, gsi1pk = :gpk, gsi1sk = :gsk",
        ExpressionAttributeValues: { ":one": 1, ":fn": fn.function_id, ":gpk": gsi1pk, ":gsk": gsi1sk },
      }),
    );
  }

  /** Counts the bytes of an artifact a run of `fn` kept, in the month of `at`. */
  async recordArtifactBytes(fn: { account_id: string; function_id: string }, at: string, bytes: number): Promise<void> {
    const { pk, sk, gsi1pk, gsi1sk } = usageKey(fn.account_id, at.slice(0, 7), fn.function_id);
    await this.doc.send(
      new UpdateCommand({
        TableName: this.table,
        Key: { pk, sk },
        UpdateExpression: "ADD artifact_bytes :bytes SET function_id = :fn, gsi1pk = :gpk, gsi1sk = :gsk",
        ExpressionAttributeValues: { ":bytes": Math.max(0, Math.round(bytes)), ":fn": fn.function_id, ":gpk": gsi1pk, ":gsk": gsi1sk },
      }),
    );
  }

  /**
   * Counts a run without making the caller wait: in the next turn of the event loop, after
   * the answer written in this one. Reads through this store wait for the counts they
   * follow, so metrics and usage never miss a run that finished before them.
   */
  recordRunLater(run: RunItem, onError: (error: unknown) => void): void {
    const write = nextTurn()
      .then(() => this.recordRun(run))
      .catch(onError);
    this.pending.add(write);
    void write.finally(() => this.pending.delete(write));
  }

  /** A function's counters over all time. */
  async functionCounters(functionId: string): Promise<FunctionCounters> {
    await this.settle();
    const items = await this.queryAll({
      IndexName: "gsi1",
      KeyConditionExpression: "gsi1pk = :pk",
      ExpressionAttributeValues: { ":pk": usageKey("", "", functionId).gsi1pk },
    });
    const total: FunctionCounters = { ...sum(items), succeeded: 0, failed: 0, timed_out: 0, schedule_skips: 0, last_called_at: null };
    for (const item of items) {
      total.schedule_skips += Number(item.schedule_skips ?? 0);
      total.succeeded += Number(item.succeeded ?? 0);
      total.failed += Number(item.failed ?? 0);
      total.timed_out += Number(item.timed_out ?? 0);
      const at = typeof item.last_called_at === "string" ? item.last_called_at : null;
      if (at && (!total.last_called_at || at > total.last_called_at)) total.last_called_at = at;
    }
    return total;
  }

  /** The account's usage in a month (`YYYY-MM`): in total and per function id. */
  async usage(accountId: string, month: string): Promise<{ total: UsageCounters; functions: Record<string, UsageCounters> }> {
    await this.settle();
    const { pk, sk } = usageKey(accountId, month, "");
    const items = await this.queryAll({
      KeyConditionExpression: "pk = :pk AND begins_with(sk, :prefix)",
      ExpressionAttributeValues: { ":pk": pk, ":prefix": sk },
      ConsistentRead: true,
    });
    const functions: Record<string, UsageCounters> = {};
    for (const item of items) functions[String(item.function_id)] = sum([item]);
    return { total: sum(items), functions };
  }

  private async settle(): Promise<void> {
    await Promise.all(this.pending);
  }

  private queryAll(query: Omit<Parameters<typeof queryAll>[1], "TableName">) {
    return queryAll(this.doc, { ...query, TableName: this.table });
  }
}

/** The bytes of what a run's record keeps: its params, result and logs (as JSON text, as stored). */
export function runRecordBytes(run: RunItem): number {
  return Buffer.byteLength(JSON.stringify(run.params ?? {})) + Buffer.byteLength(run.result_json ?? "") + Buffer.byteLength(run.logs ?? "");
}

function sum(items: Record<string, unknown>[]): UsageCounters {
  const total: UsageCounters = { invocations: 0, execution_ms: 0, mb_ms: 0, browser_ms: 0, artifact_bytes: 0 };
  for (const item of items) {
    total.artifact_bytes += Number(item.artifact_bytes ?? 0);
    total.invocations += Number(item.invocations ?? 0);
    total.execution_ms += Number(item.execution_ms ?? 0);
    total.mb_ms += Number(item.mb_ms ?? 0);
    total.browser_ms += Number(item.browser_ms ?? 0);
  }
  return total;
}
