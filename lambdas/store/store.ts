import type { DynamoDBDocumentClient } from "@aws-sdk/lib-dynamodb";
import { AccountStore } from "./accountStore";
import { FunctionStore } from "./functionStore";
import { LimitStore } from "./limitStore";
import { MeterStore } from "./meterStore";
import { RunStore } from "./runStore";
import { ScheduleStore } from "./scheduleStore";
import { MAIN_TABLE, tableName } from "./tables";
import { VersionStore } from "./versionStore";

/** Everything browserfn keeps, on DynamoDB (dynalite locally). */
export interface Store {
  accounts: AccountStore;
  functions: FunctionStore;
  versions: VersionStore;
  runs: RunStore;
  meters: MeterStore;
  schedules: ScheduleStore;
  limits: LimitStore;
}

/** Runs are kept this long by default (DynamoDB TTL on AWS). */
export const DEFAULT_RUN_RETENTION_DAYS = 30;

export function createStore(
  doc: DynamoDBDocumentClient,
  tablePrefix: string,
  runRetentionDays = DEFAULT_RUN_RETENTION_DAYS,
): Store {
  const table = tableName(tablePrefix, MAIN_TABLE);
  return {
    accounts: new AccountStore(doc, table),
    functions: new FunctionStore(doc, table),
    versions: new VersionStore(doc, table),
    runs: new RunStore(doc, table, runRetentionDays * 86_400),
    meters: new MeterStore(doc, table),
    schedules: new ScheduleStore(doc, table, runRetentionDays * 86_400),
    limits: new LimitStore(doc, table),
  };
}
