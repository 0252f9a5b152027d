import { startDynalite } from "../../lambdas/local/dynaliteServer";
import { createTablesIfMissing } from "../../lambdas/store/createTables";
import { createDocumentClient } from "../../lambdas/store/dynamo";
import { createStore, type Store, type StoreOptions } from "../../lambdas/store/store";

/** A store on a fresh in-memory dynalite, for tests below the HTTP layer. */
export async function startMemoryStore(
  options: StoreOptions = {},
): Promise<{ store: Store; close(): Promise<void>; storeCalls(): number; delayAnswers(ms: number, commandName: string): void }> {
  const dynamo = await startDynalite(null);
  const { client, doc } = createDocumentClient({
    endpoint: dynamo.endpoint,
    region: "local",
    credentials: { accessKeyId: "local", secretAccessKey: "local" },
  });
  await createTablesIfMissing(client, "test");
  let calls = 0;
  let delay = { ms: 0, commandName: "" };
  const send = doc.send.bind(doc);
  doc.send = (async (...args: Parameters<typeof send>) => {
    calls++;
    const answer = await send(...args);
    if (args[0].constructor.name === delay.commandName) await new Promise((resolve) => setTimeout(resolve, delay.ms));
    return answer;
  }) as typeof doc.send;
  return {
    store: createStore(doc, "test", options),
    /** Requests the store has sent to dynalite so far. */
    storeCalls: () => calls,
    /** Holds dynalite's answers to commands of this class (e.g. "GetCommand") for `ms` before the store sees them. */
    delayAnswers: (ms, commandName) => {
      delay = { ms, commandName };
    },
    close: async () => {
      client.destroy();
      await dynamo.close();
    },
  };
}
