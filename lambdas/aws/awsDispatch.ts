import { SFNClient } from "@aws-sdk/client-sfn";
import { MAX_BODY_BYTES } from "../config/serviceConfig";
import { type Clock, type Deps } from "../deps";
import { wakeQueue } from "../queue/dispatchQueue";
import { RunQueueState } from "../queue/queueState";
import { QueueSweep } from "../queue/sweepQueues";
import type { OutcomeBucket } from "../runtime/aws/outcomeBucket";
import type { ProfileObjects } from "../profiles/aws/profileObjects";
import type { QueueDispatch } from "../runtime/aws/recordRun";
import { createRunStarter, type StepFunctionsLike } from "../runtime/aws/runExecutions";
import type { Runtime } from "../runtime/runtime";
import type { SecretBox } from "../secrets/secretBox";
import type { RunDataKeys } from "../secrets/runEnvelope/runDataKeys";
import type { Store } from "../store/store";
import type { WebhookOutbox } from "../webhooks/webhookOutbox";
import type { DispatchEnvConfig } from "./awsConfig";

/** What the deps of a Lambda that starts queued runs but serves no route are built from. */
export interface DispatcherParts {
  store: Store;
  clock: Clock;
  log: (line: string) => void;
  secretBox: SecretBox;
  webhooks?: WebhookOutbox;
  /** Presigns the upload URLs of a run's outcome and artifacts. */
  outcomes: Pick<OutcomeBucket, "uploads">;
  stepFunctions: StepFunctionsLike;
  dispatch: Pick<DispatchEnvConfig, "plans" | "stateMachineArn" | "secrets">;
  /** Profiles' states in the run bucket: the runs it starts get their profiles' URLs (absent: they open none). */
  profileObjects?: ProfileObjects;
  /** Seals the runs' secrets under their function's data key (absent: each as stored only). */
  runDataKeys?: RunDataKeys;
}

/** How early a due wake-up may come (clocks of Step Functions and Lambda apart): waited for in the Lambda. */
const WAKE_SKEW_MS = 2_000;

/**
 * The run queue's state in a Lambda, which is frozen between its events: a queued run that is
 * not ready yet (a retry's backoff) is woken by its workflow at its `retry_at` (runWorkflow.ts,
 * WaitRetry and WakeQueue) or by the sweeper's recovery, never by a timer of this process; only
 * one due within WAKE_SKEW_MS (a wake-up that came a little early) is waited for here, as queue
 * work (idle() awaits it before the Lambda answers).
 */
export class LambdaQueueState extends RunQueueState {
  override wakeAt(_accountId: string, at: string, now: Date, wake: () => void): void {
    const inMs = Date.parse(at) - now.getTime();
    if (this.isClosed || inMs > WAKE_SKEW_MS) return;
    void this.track(new Promise<void>((resolve) => setTimeout(resolve, Math.max(0, inMs) + 5)).then(wake));
  }
}

/** Step Functions with the SDK's standard retries: an execution is named after its run, so a repeated start is the same one. */
export function createDispatchStepFunctions(region: string): SFNClient {
  return new SFNClient({ region, retryMode: "standard", maxAttempts: 5 });
}

const notHere = (what: string) => () => Promise.reject(new Error(`${what} is not done by this Lambda (it only starts queued runs)`));

/**
 * The deps the run queue's dispatcher uses (dispatchQueue.ts) in a Lambda that serves no route,
 * the run recorder and the sweeper: the store, the plans, a runtime that only starts runs (an
 * execution of the run workflow: no Lambda control plane, no deploys) and that never watches a
 * run it started, the secret box (a run's sealed secrets, and their values to redact), and a
 * queue state of its own (its dispatch loops are awaited before the Lambda is frozen).
 */
export function createDispatcherDeps(parts: DispatcherParts): Deps {
  const invoke = createRunStarter({
    stepFunctions: parts.stepFunctions,
    stateMachineArn: parts.dispatch.stateMachineArn,
    outcomes: parts.outcomes,
    runs: parts.store.runs,
    functionPrefix: parts.dispatch.secrets.functionPrefix,
    executionRoleId: parts.dispatch.secrets.executionRoleId,
    ...(parts.profileObjects ? { profiles: { store: parts.store, objects: parts.profileObjects } } : {}),
    ...(parts.runDataKeys ? { runDataKeys: parts.runDataKeys } : {}),
  });
  const runtime: Runtime = {
    invoke,
    // A failed attempt is queued again by the recorder (recordRetry.ts).
    retries: true,
    deploy: notHere("Deploying"),
    configure: notHere("Configuring a function"),
    remove: notHere("Removing a function"),
    close: async () => undefined,
  };
  return {
    store: parts.store,
    identity: { authenticate: notHere("Authentication"), forget: () => undefined },
    runtime,
    queue: new LambdaQueueState(),
    codeAnalysis: { compile: notHere("Reading code"), warnings: notHere("Reading code"), close: async () => undefined },
    scheduler: { check: () => undefined, sync: notHere("Scheduling"), remove: notHere("Scheduling"), close: async () => undefined },
    clock: parts.clock,
    secretBox: parts.secretBox,
    ...(parts.webhooks ? { webhooks: parts.webhooks } : {}),
    // A queued run keeps the base URL it was queued with; nothing here answers a request.
    config: { plans: parts.dispatch.plans, publicUrl: null, syncWaitSeconds: 0, maxBodyBytes: MAX_BODY_BYTES },
    log: parts.log,
  };
}

/**
 * Starts the account's queued runs while its plan has free slots, in this process, and
 * resolves once that (and what it set off) is done: a Lambda is frozen after its event, so
 * nothing may be left in flight. Never rejects: a failure is logged, and the sweeper's
 * recovery (below) finds the runs that are still queued.
 */
export function awsQueueDispatch(deps: Deps): QueueDispatch {
  return async (accountId, limits) => {
    wakeQueue(deps, accountId, limits ? { limits } : {});
    await deps.queue.idle();
  };
}

/**
 * The run queue's recovery in the sweeper: wakes the dispatcher of every account with queued
 * runs (QueueSweep: through the sparse QUEUED entry) and waits until each has started what its
 * free slots allow. Resolves with how many accounts it woke.
 */
export function awsQueueRecovery(deps: Deps): () => Promise<number> {
  const sweep = new QueueSweep(deps);
  return async () => {
    const accounts = await sweep.sweep();
    await deps.queue.idle();
    return accounts;
  };
}
