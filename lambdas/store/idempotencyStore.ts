import { DeleteCommand, GetCommand, PutCommand, UpdateCommand } from "@aws-sdk/lib-dynamodb";
import { createHash } from "node:crypto";
import { sendConditional, type DocumentSender } from "./dynamo";

/** How long an idempotency key holds (shared/API.md: 24 h). */
export const IDEMPOTENCY_TTL_SECONDS = 24 * 3600;

/** The first request under a key: what it asked (a hash) and the run it started. */
export interface IdempotentRequest {
  request_hash: string;
  run_id: string;
}

/**
 * The first request under a key, as a duplicate finds it: `started` once the runtime has taken
 * its run while the run's record may still say `queued` (a worker still starting), so the run
 * will end with a final record whatever happens (see markStarted).
 */
export interface FirstRequest extends IdempotentRequest {
  started: boolean;
  /** When the key was claimed (ISO 8601). */
  created_at: string;
}

const digest = (text: string) => createHash("sha256").update(text).digest("hex");
const claimKey = (accountId: string, functionId: string, key: string) => ({ pk: `IDEM#${accountId}#${functionId}`, sk: `KEY#${digest(key)}` });

/**
 * Idempotency keys of invocations, per account and function: one item per key (its hash: keys
 * are the caller's text), claimed with a conditional write, so of concurrent duplicates exactly
 * one starts a run. Items expire after IDEMPOTENCY_TTL_SECONDS (TTL on AWS; an expired one is
 * claimed again, which is as good as gone).
 */
export class IdempotencyStore {
  constructor(
    private readonly doc: DocumentSender,
    private readonly table: string,
  ) {}

  /** Claims `key` for this request; the first request's when another holds it (unexpired). */
  async claim(accountId: string, functionId: string, key: string, request: IdempotentRequest, now: Date): Promise<{ claimed: true } | { claimed: false; first: FirstRequest }> {
    const at = Math.floor(now.getTime() / 1000);
    const item = { ...claimKey(accountId, functionId, key), request_hash: request.request_hash, run_id: request.run_id, created_at: now.toISOString(), expires_at: at + IDEMPOTENCY_TTL_SECONDS };
    const claimed = await sendConditional(
      this.doc,
      new PutCommand({ TableName: this.table, Item: item, ConditionExpression: "attribute_not_exists(pk) OR expires_at < :now", ExpressionAttributeValues: { ":now": at } }),
    );
    if (claimed) return { claimed: true };
    const { Item } = await this.doc.send(new GetCommand({ TableName: this.table, Key: claimKey(accountId, functionId, key), ConsistentRead: true }));
    if (!Item) return this.claim(accountId, functionId, key, request, now); // released meanwhile
    return { claimed: false, first: { request_hash: String(Item.request_hash), run_id: String(Item.run_id), started: Item.started === true, created_at: String(Item.created_at) } };
  }

  /**
   * Notes on the key that its run was taken by the runtime (it can no longer be refused), for a
   * run whose record still says `queued`. Only this run's claim; a key given back is left so.
   */
  async markStarted(accountId: string, functionId: string, key: string, runId: string): Promise<void> {
    await sendConditional(
      this.doc,
      new UpdateCommand({
        TableName: this.table,
        Key: claimKey(accountId, functionId, key),
        UpdateExpression: "SET started = :started",
        ConditionExpression: "run_id = :run",
        ExpressionAttributeValues: { ":started": true, ":run": runId },
      }),
    );
  }

  /** Gives a key back (its run was never started): a retry with it may start one. Only this run's claim. */
  async release(accountId: string, functionId: string, key: string, runId: string): Promise<void> {
    await sendConditional(
      this.doc,
      new DeleteCommand({ TableName: this.table, Key: claimKey(accountId, functionId, key), ConditionExpression: "run_id = :run", ExpressionAttributeValues: { ":run": runId } }),
    );
  }
}

/** What makes two invocations the same request: the version and the parameters. */
export function requestHash(version: number, params: Record<string, unknown>): string {
  return digest(JSON.stringify([version, canonical(params)]));
}

function canonical(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(canonical);
  if (value && typeof value === "object") {
    return Object.fromEntries(Object.keys(value as object).sort().map((key) => [key, canonical((value as Record<string, unknown>)[key])]));
  }
  return value;
}
