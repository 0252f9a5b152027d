import { type DynamoDBDocumentClient, GetCommand, QueryCommand, UpdateCommand } from "@aws-sdk/lib-dynamodb";
import type { RunItem } from "../runs/types";
import { withoutKeys } from "./keys";

export interface FunctionCounters {
  total_calls: number;
  succeeded_calls: number;
  failed_calls: number;
  timed_out_calls: number;
  duration_total_ms: number;
  last_called_at: string | null;
}

export interface UsageCounters {
  invocations: number;
  execution_ms: number;
  /** memory_mb × execution ms (GB-seconds = mb_ms / 1024 / 1000). */
  mb_ms: number;
  browser_ms: number;
}

const metricsKey = (functionId: string) => ({ pk: `FNID#${functionId}`, sk: "METRICS" });
const usageKey = (accountId: string, month: string, functionId?: string) => ({
  pk: `ACCOUNT#${accountId}`,
  sk: functionId ? `USAGE#${month}#${functionId}` : `USAGE#${month}`,
});

/** Counters kept with DynamoDB ADD, so reading metrics and usage never scans runs. */
export class MeterStore {
  constructor(
    private readonly doc: DynamoDBDocumentClient,
    private readonly table: string,
  ) {}

  /** Counts one finished run in the function's metrics and the account's monthly usage. */
  async recordRun(run: RunItem): Promise<void> {
    const duration = run.duration_ms ?? 0;
    const outcome = run.status === "succeeded" ? "succeeded_calls" : run.status === "timed_out" ? "timed_out_calls" : "failed_calls";
    await this.doc.send(
      new UpdateCommand({
        TableName: this.table,
        Key: metricsKey(run.function_id),
        UpdateExpression: `ADD total_calls :one, ${outcome} :one, duration_total_ms :duration SET last_called_at = :at`,
        ExpressionAttributeValues: { ":one": 1, ":duration": duration, ":at": run.queued_at },
      }),
    );
    const month = run.queued_at.slice(0, 7);
    for (const key of [usageKey(run.account_id, month), usageKey(run.account_id, month, run.function_id)]) {
      await this.doc.send(
        new UpdateCommand({
          TableName: this.table,
          Key: key,
          UpdateExpression: "ADD invocations :one, execution_ms :duration, mb_ms :mbms, browser_ms :browser SET function_id = :fn",
          ExpressionAttributeValues: {
            ":one": 1,
            ":duration": duration,
            ":mbms": duration * run.memory_mb,
            ":browser": run.browser_ms,
            ":fn": key.sk.split("#")[2] ?? null,
          },
        }),
      );
    }
  }

  async functionCounters(functionId: string): Promise<FunctionCounters> {
    const { Item } = await this.doc.send(new GetCommand({ TableName: this.table, Key: metricsKey(functionId), ConsistentRead: true }));
    const item = Item ? withoutKeys<Partial<FunctionCounters>>(Item) : {};
    return {
      total_calls: item.total_calls ?? 0,
      succeeded_calls: item.succeeded_calls ?? 0,
      failed_calls: item.failed_calls ?? 0,
      timed_out_calls: item.timed_out_calls ?? 0,
      duration_total_ms: item.duration_total_ms ?? 0,
      last_called_at: item.last_called_at ?? null,
    };
  }

  /** The account's usage in a month (`YYYY-MM`): in total and per function id. */
  async usage(accountId: string, month: string): Promise<{ total: UsageCounters; functions: Record<string, UsageCounters> }> {
    const { Items } = await this.doc.send(
      new QueryCommand({
        TableName: this.table,
        KeyConditionExpression: "pk = :pk AND begins_with(sk, :prefix)",
        ExpressionAttributeValues: { ":pk": usageKey(accountId, month).pk, ":prefix": usageKey(accountId, month).sk },
        ConsistentRead: true,
      }),
    );
    const counters = (item: Record<string, unknown>): UsageCounters => ({
      invocations: Number(item.invocations ?? 0),
      execution_ms: Number(item.execution_ms ?? 0),
      mb_ms: Number(item.mb_ms ?? 0),
      browser_ms: Number(item.browser_ms ?? 0),
    });
    const total = Items?.find((item) => item.sk === usageKey(accountId, month).sk);
    const functions: Record<string, UsageCounters> = {};
    for (const item of Items ?? []) if (typeof item.function_id === "string") functions[item.function_id] = counters(item);
    return { total: total ? counters(total) : counters({}), functions };
  }
}
