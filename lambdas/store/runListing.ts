import { QueryCommand } from "@aws-sdk/lib-dynamodb";
import type { RunItem, RunStatus, RunTrigger } from "../runs/types";
import type { DocumentSender } from "./dynamo";
import { accountRunsKey, listedToRun, runsIndexKey } from "./runItems";
import { ACCOUNT_RUNS_INDEX, RUNS_INDEX } from "./tables";

/** Which of an account's runs to list (GET /runs). */
export interface RunListQuery {
  accountId: string;
  /** Only this function's runs (its id; the caller has resolved a name to it). */
  functionId?: string;
  status?: RunStatus;
  trigger?: RunTrigger;
  limit: number;
  /** List runs older than this run id (a page's position). */
  before?: string;
}

export interface RunListPage {
  runs: RunItem[];
  /** The run id up to which this page looked (the next page starts below it), or null when nothing is older. */
  lookedTo: string | null;
}

/**
 * Index items read per page at most, whatever the filters: a filter that matches few runs gives
 * a short (even empty) page with a position to go on from, never a scan of the whole history.
 */
const MAX_EXAMINED = 1000;

/**
 * A page of an account's runs, newest first, as listed (RUN_LIST_ATTRIBUTES): through the
 * account_runs index, or the function's runs index with a function filter (both sorted by run
 * id, a ULID). Status and trigger filter the index's items (and the account, in the function's
 * index, so a function id of another account lists nothing).
 */
export async function listRunsPage(doc: DocumentSender, table: string, query: RunListQuery): Promise<RunListPage> {
  const key = query.functionId
    ? { index: RUNS_INDEX, pk: "runs_pk", sk: "runs_sk", value: runsIndexKey(query.functionId, "").runs_pk }
    : { index: ACCOUNT_RUNS_INDEX, pk: "acct_runs_pk", sk: "acct_runs_sk", value: accountRunsKey(query.accountId, "").acct_runs_pk };
  const names: Record<string, string> = { "#pk": key.pk, "#account": "account_id" };
  const values: Record<string, unknown> = { ":pk": key.value, ":account": query.accountId };
  const filters = ["#account = :account"];
  if (query.status) {
    names["#status"] = "status";
    values[":status"] = query.status;
    filters.push("#status = :status");
  }
  if (query.trigger) {
    names["#trigger"] = "trigger";
    values[":trigger"] = query.trigger;
    filters.push("#trigger = :trigger");
  }
  if (query.before) {
    names["#sk"] = key.sk;
    values[":before"] = query.before;
  }
  const runs: RunItem[] = [];
  let examined = 0;
  let startKey: Record<string, unknown> | undefined;
  let lookedTo: string | null = null;
  do {
    const page = await doc.send(
      new QueryCommand({
        TableName: table,
        IndexName: key.index,
        KeyConditionExpression: query.before ? "#pk = :pk AND #sk < :before" : "#pk = :pk",
        FilterExpression: filters.join(" AND "),
        ExpressionAttributeNames: names,
        ExpressionAttributeValues: values,
        ScanIndexForward: false,
        Limit: Math.min(MAX_EXAMINED - examined, Math.max(query.limit - runs.length, 25)),
        ExclusiveStartKey: startKey,
      }),
    );
    examined += page.ScannedCount ?? 0;
    for (const item of page.Items ?? []) {
      if (runs.length === query.limit) break;
      runs.push(listedToRun(item));
      lookedTo = String(item.run_id);
    }
    startKey = page.LastEvaluatedKey;
    if (runs.length === query.limit) return { runs, lookedTo };
    // Looked through this page's items (matched or not): the next page starts below them.
    if (startKey) lookedTo = String(startKey[key.sk]);
  } while (startKey && examined < MAX_EXAMINED);
  return { runs, lookedTo: startKey ? lookedTo : null };
}
