import { startDynalite } from "../../lambdas/local/dynaliteServer";
import { createTablesIfMissing } from "../../lambdas/store/createTables";
import { createDocumentClient } from "../../lambdas/store/dynamo";
import { createStore, type Store } from "../../lambdas/store/store";

/** A store on a fresh in-memory dynalite, for tests below the HTTP layer. */
export async function startMemoryStore(): Promise<{ store: Store; close(): Promise<void> }> {
  const dynamo = await startDynalite(null);
  const { client, doc } = createDocumentClient({
    endpoint: dynamo.endpoint,
    region: "local",
    credentials: { accessKeyId: "local", secretAccessKey: "local" },
  });
  await createTablesIfMissing(client, "test");
  return {
    store: createStore(doc, "test"),
    close: async () => {
      client.destroy();
      await dynamo.close();
    },
  };
}
