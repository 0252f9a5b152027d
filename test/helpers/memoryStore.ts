import { startDynalite } from "../../lambdas/local/dynaliteServer";
import { createTablesIfMissing } from "../../lambdas/store/createTables";
import type { DynamoDBDocumentClient } from "@aws-sdk/lib-dynamodb";
import { createDocumentClient, scanAll } from "../../lambdas/store/dynamo";
import { createStore, type Store, type StoreOptions } from "../../lambdas/store/store";
import { MAIN_TABLE, tableName } from "../../lambdas/store/tables";
import { dynaliteClientConfig } from "../../lambdas/local/dynaliteClient";

export interface MemoryStore {
  store: Store;
  /** The document client under the store, and its table: for writing items as older versions did. */
  doc: DynamoDBDocumentClient;
  table: string;
  /** Every item of the table. */
  scan(): Promise<Record<string, unknown>[]>;
  close(): Promise<void>;
  /** Requests the store has sent to dynalite so far. */
  storeCalls(): number;
  /** Holds dynalite's answers to commands of this class (e.g. "GetCommand") for `ms` before the store sees them. */
  delayAnswers(ms: number, commandName: string): void;
}

/** A store on a fresh in-memory dynalite, for tests below the HTTP layer. */
export async function startMemoryStore(options: StoreOptions = {}): Promise<MemoryStore> {
  const dynamo = await startDynalite(null);
  const { client, doc } = createDocumentClient(dynaliteClientConfig(dynamo.endpoint, dynamo.secret));
  try {
    await createTablesIfMissing(client, "test");
  } catch (error) {
    client.destroy();
    await dynamo.close();
    throw error;
  }
  let calls = 0;
  let delay = { ms: 0, commandName: "" };
  const send = doc.send.bind(doc);
  doc.send = (async (...args: Parameters<typeof send>) => {
    calls++;
    const answer = await send(...args);
    if (args[0].constructor.name === delay.commandName) await new Promise((resolve) => setTimeout(resolve, delay.ms));
    return answer;
  }) as typeof doc.send;
  const table = tableName("test", MAIN_TABLE);
  return {
    store: createStore(doc, "test", options),
    doc,
    table,
    scan: () => scanAll(doc, { TableName: table }),
    storeCalls: () => calls,
    delayAnswers: (ms, commandName) => {
      delay = { ms, commandName };
    },
    close: async () => {
      client.destroy();
      await dynamo.close();
    },
  };
}
