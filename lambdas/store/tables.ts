/**
 * The DynamoDB table(s) browserfn uses, as plain data: the CDK stack and the local
 * bootstrap (dynalite) both build their tables from this one definition.
 *
 * One table, single-table design:
 *
 * | item              | pk                    | sk                 | gsi1pk              | gsi1sk        |
 * |-------------------|-----------------------|--------------------|---------------------|---------------|
 * | account           | ACCOUNT#<account>     | ACCOUNT            |                     |               |
 * | api key           | KEY#<sha256 of key>   | KEY                | ACCOUNT#<account>   | KEY#<key_id>  |
 * | function record   | ACCOUNT#<account>     | FN#<name>          | FNID#<function_id>  | FN            |
 * | version           | FNID#<function_id>    | VER#<000001>       |                     |               |
 * | version code part | FNID#<function_id>    | VER#<000001>#<part>#<n> |                |               |
 */
export interface KeyAttribute {
  name: string;
  type: "S" | "N" | "B";
}

export interface TableDefinition {
  /** Logical id, also the suffix of the physical table name. */
  id: string;
  partitionKey: KeyAttribute;
  sortKey: KeyAttribute;
  globalSecondaryIndexes: { indexName: string; partitionKey: KeyAttribute; sortKey: KeyAttribute }[];
  /** Attribute holding an epoch-seconds expiry (DynamoDB TTL on AWS, a sweep locally). */
  timeToLiveAttribute: string;
}

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
  ],
  timeToLiveAttribute: "expires_at",
};

export const TABLES = [MAIN_TABLE] as const;

/** Physical table name for a deployment prefix, e.g. `browserfn-main`. */
export function tableName(prefix: string, table: TableDefinition): string {
  return `${prefix}-${table.id}`;
}
