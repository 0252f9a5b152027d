import type { BlobCompressor } from "./blobParts";
import type { DocumentSender } from "./dynamo";
import { AccountStore } from "./accountStore";
import { BatchStore } from "./batchStore";
import { ArtifactStore } from "./artifactStore";
import { IdempotencyStore } from "./idempotencyStore";
import { CachedFunctionStore } from "./cachedFunctionStore";
import { DeliveryStore } from "./deliveryStore";
import { FunctionStore } from "./functionStore";
import { LimitStore } from "./limitStore";
import { MeterStore } from "./meterStore";
import { RunStore } from "./runStore";
import { ScheduleStore } from "./scheduleStore";
import { SecretStore } from "./secretStore";
import { StorageStore } from "./storageStore";
import { MAIN_TABLE, tableName } from "./tables";
import { VersionStore } from "./versionStore";
import { QueueCounts } from "../queue/queueCounts";
import { QueueItems } from "../queue/queueItems";
import { ProfileStore } from "../profiles/profileStore";
import { ProfileStateRecords } from "../profiles/aws/profileStateRecords";

/** Everything browserfn keeps, on DynamoDB (dynalite locally). */
export interface Store {
  accounts: AccountStore;
  functions: FunctionStore;
  versions: VersionStore;
  runs: RunStore;
  meters: MeterStore;
  schedules: ScheduleStore;
  limits: LimitStore;
  artifacts: ArtifactStore;
  idempotency: IdempotencyStore;
  secrets: SecretStore;
  deliveries: DeliveryStore;
  /** What each account holds (artifacts, run records), against its plan's storage cap. */
  storage: StorageStore;
  /** The run queue's items and its counters (lambdas/queue). */
  queueItems: QueueItems;
  queueCounts: QueueCounts;
  batches: BatchStore;
  /** Profiles' records and writers' leases (their states are in Deps.profileBlobs). */
  profiles: ProfileStore;
  /** Profiles' state pointers and runs' lease lists (the AWS run pipeline: lambdas/profiles/aws). */
  profileStates: ProfileStateRecords;
}

/** Runs are kept this long by default (DynamoDB TTL on AWS). */
export const DEFAULT_RUN_RETENTION_DAYS = 30;

export interface StoreOptions {
  runRetentionDays?: number;
  /**
   * This process is the only writer of the table (the local service): function records are
   * then cached in memory (see CachedFunctionStore). Never on AWS, where many Lambdas write.
   */
  soleWriter?: boolean;
  /** Artifacts are kept this long (default DEFAULT_ARTIFACT_RETENTION_DAYS). */
  artifactRetentionDays?: number;
  /** Where runs' big results and parameters are gzipped (locally: the result thread, accounts in turn; default libuv's pool). */
  compressor?: BlobCompressor;
}

export function createStore(doc: DocumentSender, tablePrefix: string, options: StoreOptions = {}): Store {
  const table = tableName(tablePrefix, MAIN_TABLE);
  const runRetentionDays = options.runRetentionDays ?? DEFAULT_RUN_RETENTION_DAYS;
  const storage = new StorageStore(doc, table);
  return {
    accounts: new AccountStore(doc, table),
    functions: options.soleWriter ? new CachedFunctionStore(doc, table) : new FunctionStore(doc, table),
    versions: new VersionStore(doc, table),
    runs: new RunStore(doc, table, runRetentionDays * 86_400, options.compressor),
    meters: new MeterStore(doc, table, { store: storage, runRetentionSeconds: runRetentionDays * 86_400 }),
    schedules: new ScheduleStore(doc, table, runRetentionDays * 86_400),
    limits: new LimitStore(doc, table),
    artifacts: new ArtifactStore(doc, table, options.artifactRetentionDays),
    idempotency: new IdempotencyStore(doc, table),
    secrets: new SecretStore(doc, table),
    deliveries: new DeliveryStore(doc, table),
    storage,
    queueItems: new QueueItems(doc, table),
    queueCounts: new QueueCounts(doc, table),
    batches: new BatchStore(doc, table, runRetentionDays * 86_400),
    profiles: new ProfileStore(doc, table),
    profileStates: new ProfileStateRecords(doc, table),
  };
}
