import { TABLES, tableName } from "../store/tables";
import { dynaliteRequest } from "./dynaliteDocumentClient";

/** Tables' names in one ListTables page (dynalite's and DynamoDB's most). */
const LIST_LIMIT = 100;

/**
 * Whether every table of `prefix` is there, active, with all its indexes, and no rebuild is
 * pending (no `<name>.rebuild` copy): what createTablesIfMissing would then leave as it is.
 * Asked with two plain requests (ListTables, then DescribeTable per table), because a start on an
 * existing data dir, the common case, would otherwise spend ~150 ms of CPU on the SDK client's
 * first request alone (its middleware and protocol code load then). Any doubt answers false, and
 * the start then goes through createTablesIfMissing as before.
 */
export async function tablesReady(endpoint: string, secret: string, prefix: string): Promise<boolean> {
  const call = dynaliteCall(endpoint, secret);
  const listed = await call("ListTables", { Limit: LIST_LIMIT }).catch(() => undefined);
  const names = new Set(Array.isArray(listed?.TableNames) ? listed.TableNames.filter((name): name is string => typeof name === "string") : []);
  if (!listed || listed.LastEvaluatedTableName !== undefined) return false;
  for (const table of TABLES) {
    const name = tableName(prefix, table);
    if (!names.has(name) || names.has(`${name}.rebuild`)) return false;
    const described = await call("DescribeTable", { TableName: name }).catch(() => undefined);
    const description = described?.Table as { TableStatus?: unknown; GlobalSecondaryIndexes?: { IndexName?: unknown }[] } | undefined;
    if (description?.TableStatus !== "ACTIVE") return false;
    const present = new Set((description.GlobalSecondaryIndexes ?? []).map((index) => index.IndexName));
    if (table.globalSecondaryIndexes.some((index) => !present.has(index.indexName))) return false;
  }
  return true;
}

type Answer = Record<string, unknown> & { TableNames?: unknown; LastEvaluatedTableName?: unknown; Table?: unknown };

/** How long each of the check's requests may stay unanswered. */
const REQUEST_TIMEOUT_MS = 10_000;

/** One request to dynalite through the document client's own request (with the store's secret); rejects on anything but 200. */
function dynaliteCall(endpoint: string, secret: string): (operation: string, input: object) => Promise<Answer> {
  const target = { url: new URL(endpoint), secret, timeoutMs: REQUEST_TIMEOUT_MS };
  return (operation, input) => dynaliteRequest(target, operation, JSON.stringify(input)) as Promise<Answer>;
}
