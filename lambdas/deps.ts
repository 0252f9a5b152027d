import type { ArtifactItem } from "./artifacts/artifacts";
import type { CodeAnalysis } from "./code/analysis/codeAnalysis";
import type { ServiceConfig } from "./config/serviceConfig";
import type { FunctionItem } from "./functions/types";
import type { RateLimiter } from "./http/rateLimiter";
import type { Identity } from "./identity/identity";
import type { RunQueueState } from "./queue/queueState";
import type { Runtime } from "./runtime/runtime";
import type { Scheduler } from "./schedule/scheduler";
import type { SecretBox } from "./secrets/secretBox";
import type { Store } from "./store/store";
import type { WebhookOutbox } from "./webhooks/webhookOutbox";
import type { ProfileBlobs } from "./profiles/profileBlobs";

/** Where the bytes of runs' artifacts are: read here (local files) or a presigned download (S3). */
export interface ArtifactContent {
  open(item: ArtifactItem): Promise<{ bytes: Uint8Array } | { redirect: string } | null>;
}

export interface Clock {
  now(): Date;
}

export const systemClock: Clock = { now: () => new Date() };

/**
 * A deploy left to run outside the request (see runDeployJob): the function it finishes, by
 * its key (account and name: a consistent read) and its id (a function deleted and created
 * again under the same name is another one), and the version that was latest when it was
 * queued. `deploy` provisions that version with the record's settings; `configure` applies
 * the record's memory and timeout to the deployed version. Either is superseded once a newer
 * version is the latest, and does nothing unless the record is still `deploying`.
 */
export interface DeployJob {
  kind: "deploy" | "configure";
  account_id: string;
  function_id: string;
  name: string;
  version: number;
  /**
   * The deploy it belongs to (the record's deploy_id when it was queued): a job whose deploy is
   * not the record's any more stops. Absent for records written before deploy ids.
   */
  deploy_id?: string;
}

/** Where deploys are queued to run outside the request (AWS: the deploy-job Lambda). */
export interface DeployJobs {
  /** Resolves once the job is queued (not run); throws when it could not be queued. */
  enqueue(job: DeployJob): Promise<void>;
}

/** The settings of a function that the platform it runs on may refuse. */
export type FunctionLimits = Pick<FunctionItem, "memory_mb" | "timeout_seconds">;

/** Everything a handler uses, built once at the edge (Lambda entry or local server). */
export interface Deps {
  store: Store;
  identity: Identity;
  runtime: Runtime;
  /** This process's part of the run queue (the queue is in the store): waiting callers, dispatch loops, timers. */
  queue: RunQueueState;
  scheduler: Scheduler;
  /** Per-key request limits (absent: none). */
  rateLimiter?: RateLimiter;
  /** Per-account deploy limits, keyed by account id (absent: none): createFunction, updateFunction with code, forkFunction. */
  deployLimiter?: RateLimiter;
  /**
   * Deploys queued to run outside the request (AWS): create and update answer `deploying` at
   * once. Absent (local): deploys run inline, before the answer.
   */
  deployJobs?: DeployJobs;
  /**
   * Rejects (400 `invalid_request`) settings the platform cannot run (AWS: memory above the
   * account's Lambda ceiling), before anything is written. Absent: no such limit.
   */
  checkFunctionSettings?(settings: FunctionLimits): Promise<void>;
  /** Reads deployed code (parameters, schemas, warnings, compile) off the request thread, within a budget. */
  codeAnalysis: CodeAnalysis;
  clock: Clock;
  /** Seals what the service must read back (function secrets, webhook signing secrets). */
  secretBox: SecretBox;
  /** Webhook events of runs' ends: the outbox whoever ends a run writes to (absent: none are sent). */
  webhooks?: WebhookOutbox;
  /** Where artifacts' bytes are (absent: runs keep none here). */
  artifactContent?: ArtifactContent;
  config: ServiceConfig;
  /** Where profiles' states are kept, sealed (absent: the service keeps none). */
  profileBlobs?: Pick<ProfileBlobs, "remove">;
  /**
   * Aborted when the service begins to stop: work it does outside requests (a batch's runs not
   * started yet: startBatchRuns) stops taking more. Absent: never.
   */
  shutdown?: AbortSignal;
  /** Where handlers write diagnostic lines (never secrets). */
  log: (line: string) => void;
}
