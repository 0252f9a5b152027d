import { CreateTableCommand, DescribeTableCommand, type DynamoDBClient, ListTablesCommand } from "@aws-sdk/client-dynamodb";
import { type DynamoDBDocumentClient, PutCommand } from "@aws-sdk/lib-dynamodb";
import { dynaliteClientConfig } from "../../lambdas/local/dynaliteClient";
import { type DynaliteServer, startDynalite } from "../../lambdas/local/dynaliteServer";
import { createTablesIfMissing } from "../../lambdas/store/createTables";
import { createDocumentClient, scanAll } from "../../lambdas/store/dynamo";
import { createStore } from "../../lambdas/store/store";
import { functionItem, runItem } from "../helpers/records";

// A local data dir made by a version before the runs and active indexes has a table with gsi1
// alone. dynalite cannot add an index to a table, so the start-up copies the table into one
// with every index, items and all.

const TABLE = "test-main";
const COPY = "test-main.rebuild";
const fn = functionItem();

/** The table as versions before the run indexes made it. */
async function createOldTable(client: DynamoDBClient, name: string): Promise<void> {
  const key = (pk: string, sk: string) => [
    { AttributeName: pk, KeyType: "HASH" as const },
    { AttributeName: sk, KeyType: "RANGE" as const },
  ];
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

/** Items as an older version wrote them: an account, and runs listed through gsi1 with 100 KB of logs each (several scan pages). */
async function writeOldItems(doc: DynamoDBDocumentClient, table: string): Promise<void> {
  await doc.send(new PutCommand({ TableName: table, Item: { pk: "ACCOUNT#acct", sk: "ACCOUNT", plan: "pro" } }));
  for (let n = 0; n < 30; n++) {
    const runId = `run_${String(n).padStart(3, "0")}`;
    const { params: _params, deadline_at: _deadline, ...run } = runItem(fn, { run_id: runId, status: "succeeded", logs: "l".repeat(100_000) });
    const item = { ...run, params_json: "{}", pk: `RUN#${runId}`, sk: "RUN", gsi1pk: `FNID#${fn.function_id}#RUNS`, gsi1sk: runId };
    await doc.send(new PutCommand({ TableName: table, Item: item }));
  }
}

/** Items as the old table had them: the upgrade adds only the account_runs keys of run items. */
const withoutAccountRunsKeys = (items: Record<string, unknown>[]) => items.map(({ acct_runs_pk: _pk, acct_runs_sk: _sk, ...item }) => item);
const sortedItems = (items: Record<string, unknown>[]) => [...items].sort((a, b) => `${String(a.pk)}/${String(a.sk)}`.localeCompare(`${String(b.pk)}/${String(b.sk)}`));

describe("an older local table", () => {
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

  const indexNames = async () =>
    ((await clients.client.send(new DescribeTableCommand({ TableName: TABLE }))).Table?.GlobalSecondaryIndexes ?? []).map((i) => i.IndexName).sort();
  const tables = async () => (await clients.client.send(new ListTablesCommand({}))).TableNames ?? [];

  it("gets the new indexes at start-up, keeping every item, and its old runs stay listed", async () => {
    await createOldTable(clients.client, TABLE);
    await writeOldItems(clients.doc, TABLE);
    const before = sortedItems(await scanAll(clients.doc, { TableName: TABLE }));

    await createTablesIfMissing(clients.client, "test");
    expect(await indexNames()).toEqual(["account_runs", "gsi1", "runs"]);
    const upgraded = sortedItems(await scanAll(clients.doc, { TableName: TABLE }));
    expect(withoutAccountRunsKeys(upgraded)).toEqual(before);
    expect(upgraded.filter((item) => item.sk === "RUN").every((item) => item.acct_runs_pk === `ACCOUNT#${fn.account_id}#RUNS` && item.acct_runs_sk === item.run_id)).toBe(true);
    expect(await tables()).toEqual([TABLE]);

    const store = createStore(clients.doc, "test");
    await store.runs.put(runItem(fn, { run_id: "run_100", status: "running" }));
    expect((await store.runs.recent(fn.function_id, 3)).map((run) => run.run_id)).toEqual(["run_100", "run_029", "run_028"]);
    expect((await store.runs.listOverdue(new Date("2026-02-01T00:00:00.000Z"), 10)).map((run) => run.run_id)).toEqual(["run_100"]);
    // The account's runs, the old ones too (GET /runs).
    expect((await store.runs.list({ accountId: fn.account_id, limit: 3 })).runs.map((run) => run.run_id)).toEqual(["run_100", "run_029", "run_028"]);

    await createTablesIfMissing(clients.client, "test"); // nothing left to do
    expect(sortedItems(await scanAll(clients.doc, { TableName: TABLE }))).toHaveLength(before.length + 1);
  });

  it("after a crash halfway, goes on from a whole copy and drops one that is not whole", async () => {
    // Crashed once the copy was whole and the table deleted: the table comes back from the copy.
    await createOldTable(clients.client, COPY);
    await writeOldItems(clients.doc, COPY);
    const items = sortedItems(await scanAll(clients.doc, { TableName: COPY }));
    await clients.doc.send(new PutCommand({ TableName: COPY, Item: { pk: "#rebuild", sk: "whole" } }));
    await createTablesIfMissing(clients.client, "test");
    expect(await indexNames()).toEqual(["account_runs", "gsi1", "runs"]);
    expect(withoutAccountRunsKeys(sortedItems(await scanAll(clients.doc, { TableName: TABLE })))).toEqual(items);
    expect(await tables()).toEqual([TABLE]);

    // Crashed while copying: the table is as it was, the part-copy goes.
    await createOldTable(clients.client, COPY);
    await clients.doc.send(new PutCommand({ TableName: COPY, Item: { pk: "ACCOUNT#stale", sk: "ACCOUNT" } }));
    await createTablesIfMissing(clients.client, "test");
    expect(withoutAccountRunsKeys(sortedItems(await scanAll(clients.doc, { TableName: TABLE })))).toEqual(items);
    expect(await tables()).toEqual([TABLE]);
  });
});
