/**
 * The DynamoDB table(s) browserfn uses, as plain data: the CDK stack and the local
 * bootstrap (dynalite) both build their tables from this one definition.
 *
 * One table, single-table design:
 *
 * | item              | pk                    | sk                 | gsi1pk              | gsi1sk        |
 * |-------------------|-----------------------|--------------------|---------------------|---------------|
 * | account           | ACCOUNT#<account>     | ACCOUNT            |                     |               |
 * | account limits    | LIMITS#<account>      | LIMITS             | QUEUED (while runs wait) | <account> |
 * | api key           | KEY#<sha256 of key>   | KEY                | ACCOUNT#<account>   | KEY#<key_id>  |
 * | function record   | ACCOUNT#<account>     | FN#<name>          | FNID#<function_id>  | FN            |
 * | version           | FNID#<function_id>    | VER#<000001>       |                     |               |
 * | version code part | FNID#<function_id>    | VER#<000001>#<part>#<n> |                |               |
 * | run               | RUN#<run_id>          | RUN                |                     |               |
 * | batch             | BATCH#<batch_id>      | BATCH              |                     |               |
 *
 * The LIMITS item (leases, this month's invocations, the run queue's counters) is written on
 * every admission, release and queue step: it has a partition of its own, so a busy account's
 * admissions never share a partition's throughput with its records (limitStore.ts).
 *
 * Runs are listed through an index of their own (gsi1 keeps every attribute, and a run item can
 * near 400 KB); queued and running runs are also in gsi1, by deadline (few at a time, read
 * every few minutes by the AWS sweeper):
 *
 * | index | partition key                    | sort key                         | holds                                   |
 * |-------|----------------------------------|----------------------------------|-----------------------------------------|
 * | runs  | runs_pk: FNID#<function_id>#RUNS | runs_sk: <run_id>                | every run: RUN_LIST_ATTRIBUTES          |
 * | gsi1  | gsi1pk: ACTIVE#<shard 0..7>      | gsi1sk: <deadline_at>#<run_id>   | queued and running runs only            |
 * | runs  | runs_pk: DEPLOYING               | runs_sk: <updated_at>#<function_id> | function records while `deploying` only |
 * | account_runs | acct_runs_pk: ACCOUNT#<account>#RUNS | acct_runs_sk: <run_id> | every run: RUN_LIST_ATTRIBUTES (GET /runs) |
 *
 * A function record is in gsi1 already (by id), so its `deploying` entry goes in the runs index
 * (whose other keys start `FNID#`): the AWS sweeper finds deploys stuck past STALE_DEPLOY_MS
 * there, reading only the keys (no scan, no new index).
 *
 * Runs last written before the account_runs index have no acct_runs keys: a local data dir's
 * are given them at the start that adds the index (backfillAccountRuns); on AWS they are listed
 * by function only (GET /runs?function=, the function's logs) until they expire.
 *
 * Runs last written before the runs index carry gsi1pk `FNID#<function_id>#RUNS` and gsi1sk
 * `<run_id>` instead, and no active keys; RunStore.recent still lists them until they expire.
 */
export interface KeyAttribute {
  name: string;
  type: "S" | "N" | "B";
}

/** Which attributes an index keeps besides the table's and its own keys (DynamoDB's Projection). */
export type IndexProjection = { type: "ALL" } | { type: "INCLUDE"; nonKeyAttributes: string[] } | { type: "KEYS_ONLY" };

export interface IndexDefinition {
  indexName: string;
  partitionKey: KeyAttribute;
  sortKey: KeyAttribute;
  /** ALL when absent. */
  projection?: IndexProjection;
}

export interface TableDefinition {
  /** Logical id, also the suffix of the physical table name. */
  id: string;
  partitionKey: KeyAttribute;
  sortKey: KeyAttribute;
  globalSecondaryIndexes: IndexDefinition[];
  /** Attribute holding an epoch-seconds expiry (DynamoDB TTL on AWS, a sweep locally). */
  timeToLiveAttribute: string;
}

/** The runs of a function, newest first. */
export const RUNS_INDEX = "runs";
/** The runs of an account, newest first (GET /runs). */
export const ACCOUNT_RUNS_INDEX = "account_runs";
/** Function records while `deploying`, by updated_at: in the runs index under `DEPLOYING` (see functionStore.ts). */
export const DEPLOYING_INDEX = RUNS_INDEX;
/** Runs still queued or running, by deadline: in gsi1 under `ACTIVE#<shard>` (see runStore.ts). */
export const ACTIVE_INDEX = "gsi1";

/**
 * What the runs index keeps of a run: what a page of logs and the metrics read, never the
 * params, result, logs or completion token.
 */
export const RUN_LIST_ATTRIBUTES = [
  "run_id",
  "account_id",
  "function_id",
  "function_name",
  "version",
  "trigger",
  "status",
  "error",
  "queued_at",
  "started_at",
  "finished_at",
  "deadline_at",
  "duration_ms",
  "browser_ms",
  "peak_memory_mb",
  "memory_mb",
] as const;

export const MAIN_TABLE: TableDefinition = {
  id: "main",
  partitionKey: { name: "pk", type: "S" },
  sortKey: { name: "sk", type: "S" },
  globalSecondaryIndexes: [
    {
      indexName: "gsi1",
      partitionKey: { name: "gsi1pk", type: "S" },
      sortKey: { name: "gsi1sk", type: "S" },
    },
    {
      indexName: RUNS_INDEX,
      partitionKey: { name: "runs_pk", type: "S" },
      sortKey: { name: "runs_sk", type: "S" },
      projection: { type: "INCLUDE", nonKeyAttributes: [...RUN_LIST_ATTRIBUTES] },
    },
    {
      indexName: ACCOUNT_RUNS_INDEX,
      partitionKey: { name: "acct_runs_pk", type: "S" },
      sortKey: { name: "acct_runs_sk", type: "S" },
      projection: { type: "INCLUDE", nonKeyAttributes: [...RUN_LIST_ATTRIBUTES] },
    },
  ],
  timeToLiveAttribute: "expires_at",
};

export const TABLES = [MAIN_TABLE] as const;

/** Physical table name for a deployment prefix, e.g. `browserfn-main`. */
export function tableName(prefix: string, table: TableDefinition): string {
  return `${prefix}-${table.id}`;
}
