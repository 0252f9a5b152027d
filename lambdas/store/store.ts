import type { DynamoDBDocumentClient } from "@aws-sdk/lib-dynamodb";
import { AccountStore } from "./accountStore";
import { FunctionStore } from "./functionStore";
import { MAIN_TABLE, tableName } from "./tables";
import { VersionStore } from "./versionStore";

/** Everything browserfn keeps, on DynamoDB (dynalite locally). */
export interface Store {
  accounts: AccountStore;
  functions: FunctionStore;
  versions: VersionStore;
}

export function createStore(doc: DynamoDBDocumentClient, tablePrefix: string): Store {
  const table = tableName(tablePrefix, MAIN_TABLE);
  return {
    accounts: new AccountStore(doc, table),
    functions: new FunctionStore(doc, table),
    versions: new VersionStore(doc, table),
  };
}
