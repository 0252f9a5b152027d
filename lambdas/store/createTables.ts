import {
  type AttributeValue,
  BatchWriteItemCommand,
  CreateTableCommand,
  DeleteTableCommand,
  DescribeTableCommand,
  type DynamoDBClient,
  GetItemCommand,
  PutItemCommand,
  ResourceInUseException,
  ResourceNotFoundException,
  ScanCommand,
  type WriteRequest,
} from "@aws-sdk/client-dynamodb";
import { accountRunsKey } from "./runItems";
import { type IndexDefinition, TABLES, type TableDefinition, tableName } from "./tables";

type Item = Record<string, AttributeValue>;

/** The item that marks a rebuild's copy as holding every item of the table. */
const WHOLE_COPY: Item = { pk: { S: "#rebuild" }, sk: { S: "whole" } };
/** BatchWriteItem's most items a request. */
const BATCH_ITEMS = 25;

/**
 * Creates the tables that do not exist yet, and gives an existing table the indexes its
 * definition added since it was made (local mode; on AWS the CDK stack owns them).
 */
export async function createTablesIfMissing(client: DynamoDBClient, prefix: string): Promise<void> {
  for (const table of TABLES) {
    const name = tableName(prefix, table);
    await finishRebuild(client, name, table);
    await createIfMissing(client, name, table);
    if (await lacksIndexes(client, name, table)) await rebuild(client, name, table);
  }
}

/**
 * Gives the table `name` every index of its definition by copying it: dynalite (4.0) accepts
 * UpdateTable's GlobalSecondaryIndexUpdates but ignores them, and an index it did add would not
 * hold the items written before. The items go to a copy made with every index, marked whole
 * once they are all in; then the table is made anew and filled from the copy. A start after a
 * crash halfway goes on from a whole copy (finishRebuild), and drops one that is not.
 */
async function rebuild(client: DynamoDBClient, name: string, table: TableDefinition): Promise<void> {
  const copy = copyName(name);
  await deleteIfExists(client, copy);
  await createIfMissing(client, copy, table);
  await copyItems(client, name, copy);
  await client.send(new PutItemCommand({ TableName: copy, Item: WHOLE_COPY }));
  await finishRebuild(client, name, table);
}

/** Makes the table anew from a rebuild's whole copy, if there is one; drops a copy that is not whole. */
async function finishRebuild(client: DynamoDBClient, name: string, table: TableDefinition): Promise<void> {
  const copy = copyName(name);
  if (await isWholeCopy(client, copy)) {
    await deleteIfExists(client, name);
    await createIfMissing(client, name, table);
    await copyItems(client, copy, name);
  }
  await deleteIfExists(client, copy);
}

const copyName = (name: string) => `${name}.rebuild`;

async function isWholeCopy(client: DynamoDBClient, copy: string): Promise<boolean> {
  try {
    const { Item } = await client.send(new GetItemCommand({ TableName: copy, Key: WHOLE_COPY, ConsistentRead: true }));
    return Item !== undefined;
  } catch (error) {
    if (error instanceof ResourceNotFoundException) return false;
    throw error;
  }
}

/** Every item of `from` (but a copy's mark) put into `to`, a scan page at a time. */
async function copyItems(client: DynamoDBClient, from: string, to: string): Promise<void> {
  let startKey: Item | undefined;
  do {
    const page = await client.send(new ScanCommand({ TableName: from, ConsistentRead: true, ExclusiveStartKey: startKey }));
    const items = (page.Items ?? []).filter((item) => item.pk?.S !== WHOLE_COPY.pk?.S).map(withAccountRunsKeys);
    for (let start = 0; start < items.length; start += BATCH_ITEMS) {
      await putAll(client, to, items.slice(start, start + BATCH_ITEMS));
    }
    startKey = page.LastEvaluatedKey;
  } while (startKey);
}

/**
 * A run item written before the account_runs index, given its keys there (the item as it is
 * otherwise): so that GET /runs lists the runs a data dir had before the upgrade.
 */
function withAccountRunsKeys(item: Item): Item {
  const accountId = item.account_id?.S;
  const runId = item.run_id?.S;
  if (item.sk?.S !== "RUN" || item.acct_runs_pk || accountId === undefined || runId === undefined) return item;
  const { acct_runs_pk, acct_runs_sk } = accountRunsKey(accountId, runId);
  return { ...item, acct_runs_pk: { S: acct_runs_pk }, acct_runs_sk: { S: acct_runs_sk } };
}

async function putAll(client: DynamoDBClient, table: string, items: Item[]): Promise<void> {
  let requests: WriteRequest[] = items.map((Item) => ({ PutRequest: { Item } }));
  while (requests.length > 0) {
    const { UnprocessedItems } = await client.send(new BatchWriteItemCommand({ RequestItems: { [table]: requests } }));
    requests = UnprocessedItems?.[table] ?? [];
  }
}

async function createIfMissing(client: DynamoDBClient, name: string, table: TableDefinition): Promise<void> {
  try {
    await client.send(new CreateTableCommand(createTableInput(name, table)));
  } catch (error) {
    if (!(error instanceof ResourceInUseException)) throw error;
  }
  await waitUntilActive(client, name);
}

async function lacksIndexes(client: DynamoDBClient, name: string, table: TableDefinition): Promise<boolean> {
  const { Table } = await client.send(new DescribeTableCommand({ TableName: name }));
  const present = new Set((Table?.GlobalSecondaryIndexes ?? []).map((index) => index.IndexName));
  return table.globalSecondaryIndexes.some((index) => !present.has(index.indexName));
}

async function deleteIfExists(client: DynamoDBClient, name: string): Promise<void> {
  try {
    await client.send(new DeleteTableCommand({ TableName: name }));
  } catch (error) {
    if (error instanceof ResourceNotFoundException) return;
    throw error;
  }
  for (let attempt = 0; attempt < 100; attempt++) {
    try {
      await client.send(new DescribeTableCommand({ TableName: name }));
    } catch (error) {
      if (error instanceof ResourceNotFoundException) return;
      throw error;
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`Table ${name} was not deleted`);
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
      Projection: projection(index),
    })),
  };
}

/** DynamoDB's Projection of an index (ALL when the definition names none). */
function projection(index: IndexDefinition) {
  const kept = index.projection ?? { type: "ALL" as const };
  return kept.type === "INCLUDE" ? { ProjectionType: kept.type, NonKeyAttributes: kept.nonKeyAttributes } : { ProjectionType: kept.type };
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
