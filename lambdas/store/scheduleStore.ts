import { PutCommand, QueryCommand, UpdateCommand } from "@aws-sdk/lib-dynamodb";
import { sendConditional, type DocumentSender } from "./dynamo";
import { asStored } from "./keys";

export type FiringOutcome = "claimed" | "started" | "skipped" | "refused";

/** One firing of a schedule: claimed once, by whichever scheduler wrote it first. */
export interface FiringItem {
  function_id: string;
  scheduled_for: string;
  outcome: FiringOutcome;
  run_id: string | null;
  reason: string | null;
}

const firingKey = (functionId: string, scheduledFor: string) => ({ pk: `FNID#${functionId}`, sk: `FIRE#${scheduledFor}` });

/** Schedule firings: the claim that makes each `(function_id, scheduled_for)` run once. */
export class ScheduleStore {
  constructor(
    private readonly doc: DocumentSender,
    private readonly table: string,
    private readonly retentionSeconds: number,
  ) {}

  /** Claims a firing with a conditional write; false when another scheduler claimed it first. */
  async claim(functionId: string, scheduledFor: string): Promise<boolean> {
    const { pk, sk } = firingKey(functionId, scheduledFor);
    return sendConditional(
      this.doc,
      new PutCommand({
        TableName: this.table,
        Item: {
          pk,
          sk,
          function_id: functionId,
          scheduled_for: scheduledFor,
          outcome: "claimed" satisfies FiringOutcome,
          run_id: null,
          reason: null,
          expires_at: this.expiry(scheduledFor),
        },
        ConditionExpression: "attribute_not_exists(pk)",
      }),
    );
  }

  /** Records what became of a claimed firing. */
  async settle(functionId: string, scheduledFor: string, outcome: FiringOutcome, runId: string | null, reason: string | null) {
    await this.doc.send(
      new UpdateCommand({
        TableName: this.table,
        Key: firingKey(functionId, scheduledFor),
        UpdateExpression: "SET outcome = :outcome, run_id = :run, reason = :reason",
        ExpressionAttributeValues: { ":outcome": outcome, ":run": runId, ":reason": reason },
      }),
    );
  }

  /** The latest firings of a function, newest first. */
  async latest(functionId: string, limit: number): Promise<FiringItem[]> {
    const { Items } = await this.doc.send(
      new QueryCommand({
        TableName: this.table,
        KeyConditionExpression: "pk = :pk AND begins_with(sk, :prefix)",
        ExpressionAttributeValues: { ":pk": firingKey(functionId, "").pk, ":prefix": "FIRE#" },
        ScanIndexForward: false,
        Limit: limit,
        ConsistentRead: true,
      }),
    );
    return (Items ?? []).map((item) => toFiring(asStored<FiringItem>(item)));
  }

  private expiry(scheduledFor: string): number {
    return Math.floor(Date.parse(scheduledFor) / 1000) + this.retentionSeconds;
  }
}

/** A firing from its stored item, field by field: attributes that are not a firing's stay behind. */
function toFiring(stored: FiringItem): FiringItem {
  return {
    function_id: stored.function_id,
    scheduled_for: stored.scheduled_for,
    outcome: stored.outcome,
    run_id: stored.run_id,
    reason: stored.reason,
  };
}
