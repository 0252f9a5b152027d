import {
  CreateTableCommand,
  DescribeTableCommand,
  type DynamoDBClient,
  ResourceInUseException,
} from "@aws-sdk/client-dynamodb";
import { TABLES, type TableDefinition, tableName } from "./tables";

/** Creates the tables that do not exist yet (local mode; on AWS the CDK stack owns them). */
export async function createTablesIfMissing(client: DynamoDBClient, prefix: string): Promise<void> {
  for (const table of TABLES) {
    const name = tableName(prefix, table);
    try {
      await client.send(new CreateTableCommand(createTableInput(name, table)));
    } catch (error) {
      if (!(error instanceof ResourceInUseException)) throw error;
    }
    await waitUntilActive(client, name);
  }
}

function createTableInput(name: string, table: TableDefinition) {
  const attributes = new Map<string, string>();
  for (const key of [table.partitionKey, table.sortKey, ...table.globalSecondaryIndexes.flatMap((i) => [i.partitionKey, i.sortKey])]) {
    attributes.set(key.name, key.type);
  }
  return {
    TableName: name,
    BillingMode: "PAY_PER_REQUEST" as const,
    AttributeDefinitions: [...attributes].map(([AttributeName, AttributeType]) => ({
      AttributeName,
      AttributeType: AttributeType as "S" | "N" | "B",
    })),
    KeySchema: [
      { AttributeName: table.partitionKey.name, KeyType: "HASH" as const },
      { AttributeName: table.sortKey.name, KeyType: "RANGE" as const },
    ],
    GlobalSecondaryIndexes: table.globalSecondaryIndexes.map((index) => ({
      IndexName: index.indexName,
      KeySchema: [
        { AttributeName: index.partitionKey.name, KeyType: "HASH" as const },
        { AttributeName: index.sortKey.name, KeyType: "RANGE" as const },
      ],
      Projection: { ProjectionType: "ALL" as const },
    })),
  };
}

async function waitUntilActive(client: DynamoDBClient, name: string): Promise<void> {
  for (let attempt = 0; attempt < 100; attempt++) {
    const { Table } = await client.send(new DescribeTableCommand({ TableName: name }));
    const indexesReady = (Table?.GlobalSecondaryIndexes ?? []).every((i) => i.IndexStatus === "ACTIVE");
    if (Table?.TableStatus === "ACTIVE" && indexesReady) return;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`Table ${name} did not become active`);
}
