import { DynamoDBClient, type DynamoDBClientConfig } from "@aws-sdk/client-dynamodb";
import { DynamoDBDocumentClient } from "@aws-sdk/lib-dynamodb";

/** The document client every store module uses; built once at the edge. */
export function createDocumentClient(config: DynamoDBClientConfig = {}): {
  client: DynamoDBClient;
  doc: DynamoDBDocumentClient;
} {
  const client = new DynamoDBClient(config);
  const doc = DynamoDBDocumentClient.from(client, {
    marshallOptions: { removeUndefinedValues: true, convertEmptyValues: false },
  });
  return { client, doc };
}

/** True when a conditional write failed because its condition did not hold. */
export function isConditionFailed(error: unknown): boolean {
  return error instanceof Error && error.name === "ConditionalCheckFailedException";
}
