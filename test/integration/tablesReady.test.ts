import { CreateTableCommand, DescribeTableCommand, type DynamoDBClient } from "@aws-sdk/client-dynamodb";
import { dynaliteClientConfig } from "../../lambdas/local/dynaliteClient";
import { type DynaliteServer, startDynalite } from "../../lambdas/local/dynaliteServer";
import { tablesReady } from "../../lambdas/local/tablesReady";
import { createTablesIfMissing } from "../../lambdas/store/createTables";
import { createDocumentClient } from "../../lambdas/store/dynamo";

// A start on an existing data dir checks its tables with two plain requests and skips
// createTablesIfMissing (and the SDK client's costly first request) only when nothing is left
// for it to do: every table there and active, with every index, and no rebuild pending.

const key = (pk: string, sk: string) => [
  { AttributeName: pk, KeyType: "HASH" as const },
  { AttributeName: sk, KeyType: "RANGE" as const },
];

async function createTable(client: DynamoDBClient, name: string): Promise<void> {
  await client.send(
    new CreateTableCommand({
      TableName: name,
      BillingMode: "PAY_PER_REQUEST",
      AttributeDefinitions: ["pk", "sk", "gsi1pk", "gsi1sk"].map((AttributeName) => ({ AttributeName, AttributeType: "S" })),
      KeySchema: key("pk", "sk"),
      GlobalSecondaryIndexes: [{ IndexName: "gsi1", KeySchema: key("gsi1pk", "gsi1sk"), Projection: { ProjectionType: "ALL" } }],
    }),
  );
  while ((await client.send(new DescribeTableCommand({ TableName: name }))).Table?.TableStatus !== "ACTIVE") {
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

describe("tablesReady", () => {
  let dynamo: DynaliteServer;
  let clients: ReturnType<typeof createDocumentClient>;
  beforeEach(async () => {
    dynamo = await startDynalite(null);
    clients = createDocumentClient(dynaliteClientConfig(dynamo.endpoint, dynamo.secret));
  });
  afterEach(async () => {
    clients.client.destroy();
    await dynamo.close();
  });

  it("is false on a new store, true once the tables are made, and asks with the store's secret", async () => {
    expect(await tablesReady(dynamo.endpoint, dynamo.secret, "test")).toBe(false);
    await createTablesIfMissing(clients.client, "test");
    expect(await tablesReady(dynamo.endpoint, dynamo.secret, "test")).toBe(true);
    // Another prefix's tables are not these; a wrong secret is refused (403), which answers false.
    expect(await tablesReady(dynamo.endpoint, dynamo.secret, "other")).toBe(false);
    expect(await tablesReady(dynamo.endpoint, "not-the-secret", "test")).toBe(false);
  });

  it("is false for a table an older version made without the newer indexes", async () => {
    await createTable(clients.client, "test-main");
    expect(await tablesReady(dynamo.endpoint, dynamo.secret, "test")).toBe(false);
  });

  it("is false while a rebuild's copy is left, so the start finishes the rebuild", async () => {
    await createTablesIfMissing(clients.client, "test");
    await createTable(clients.client, "test-main.rebuild");
    expect(await tablesReady(dynamo.endpoint, dynamo.secret, "test")).toBe(false);
    await createTablesIfMissing(clients.client, "test");
    expect(await tablesReady(dynamo.endpoint, dynamo.secret, "test")).toBe(true);
  });

  it("is false when the store does not answer", async () => {
    const endpoint = dynamo.endpoint;
    await dynamo.close();
    expect(await tablesReady(endpoint, dynamo.secret, "test")).toBe(false);
    dynamo = await startDynalite(null);
  });
});
