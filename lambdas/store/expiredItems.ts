import { DeleteCommand, ScanCommand } from "@aws-sdk/lib-dynamodb";
import { sendConditional, type DocumentSender } from "./dynamo";
import { MAIN_TABLE, tableName } from "./tables";

/**
 * DynamoDB's TTL for dynalite, which has none (the local service's sweep): removes every item
 * whose `expires_at` (epoch seconds) has passed, as DynamoDB does on AWS: runs past the run
 * retention with their params and result parts, artifact items past theirs, webhook
 * deliveries, schedule claims, idempotency keys. Each is removed only if it is still expired
 * when its turn comes (a write meanwhile that moved its expiry keeps it). Returns how many.
 *
 * What an account holds falls with it by itself (StorageStore counts by expiry day); the files
 * of artifacts are the artifact sweep's (localArtifacts.ts).
 */
export async function removeExpiredItems(doc: DocumentSender, tablePrefix: string, now: Date): Promise<number> {
  const table = tableName(tablePrefix, MAIN_TABLE);
  const nowSeconds = Math.floor(now.getTime() / 1000);
  const expiry = MAIN_TABLE.timeToLiveAttribute;
  let removed = 0;
  let startKey: Record<string, unknown> | undefined;
  do {
    // Page by page: only the keys of expired items are held, a page at a time.
    const page = await doc.send(
      new ScanCommand({
        TableName: table,
        FilterExpression: "#expiry < :now",
        ProjectionExpression: "pk, sk",
        ExpressionAttributeNames: { "#expiry": expiry },
        ExpressionAttributeValues: { ":now": nowSeconds },
        ExclusiveStartKey: startKey,
      }),
    );
    for (const item of page.Items ?? []) {
      const gone = await sendConditional(
        doc,
        new DeleteCommand({
          TableName: table,
          Key: { pk: item.pk, sk: item.sk },
          ConditionExpression: "#expiry < :now",
          ExpressionAttributeNames: { "#expiry": expiry },
          ExpressionAttributeValues: { ":now": nowSeconds },
        }),
      );
      if (gone) removed++;
    }
    startKey = page.LastEvaluatedKey;
  } while (startKey);
  return removed;
}
