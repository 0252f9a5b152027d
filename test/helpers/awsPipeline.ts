import { RunQueueState } from "../../lambdas/queue/queueState";
import { InProcessKms } from "./inProcessKms";
import { createS3ProfileObjects, type ProfileObjects } from "../../lambdas/profiles/aws/profileObjects";
import { s3ProfileRemoval } from "../../lambdas/profiles/aws/s3ProfileRemoval";
import { createKmsSecretBox, runnerSession } from "../../lambdas/secrets/kmsSecretBox";
import type { SecretBox } from "../../lambdas/secrets/secretBox";
import { createRunDataKeys } from "../../lambdas/secrets/runEnvelope/runDataKeys";
import { lambdaFunctionName } from "../../lambdas/runtime/aws/awsRuntime";
import type { LambdaHandlerOptions } from "../../lambdas/runner/lambdaHandler";
import { chmod, mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { type Clock, type Deps, systemClock } from "../../lambdas/deps";
import { DEFAULT_PLANS, type Plans } from "../../lambdas/config/plans";
import { MAX_BODY_BYTES } from "../../lambdas/config/serviceConfig";
import { type AwsRuntimeOptions, createAwsRuntime } from "../../lambdas/runtime/aws/awsRuntime";
import { createS3OutcomeBucket, type OutcomeBucket } from "../../lambdas/runtime/aws/outcomeBucket";
import { makeRunRecorder } from "../../lambdas/runtime/aws/recordRun";
import { createS3UploadedRecordings, type RecordingsS3 } from "../../lambdas/recording/aws/uploadedRecordings";
import { createS3LiveWatch } from "../../lambdas/live/aws/s3LiveWatch";
import { awsAttemptRetry } from "../../lambdas/runtime/aws/recordRetry";
import { runWorkflowDefinition, WORKFLOW_SUBSTITUTIONS } from "../../lambdas/runtime/aws/runWorkflow";
import { makeRunSweeper } from "../../lambdas/runtime/aws/sweepRuns";
import { awsQueueDispatch, awsQueueRecovery, createDispatcherDeps } from "../../lambdas/aws/awsDispatch";
import type { StepFunctionsLike } from "../../lambdas/runtime/aws/runExecutions";
import type { Runtime } from "../../lambdas/runtime/runtime";
import { InProcessLambda, type ServiceLambda } from "./inProcessLambda";
import { InProcessS3 } from "./inProcessS3";
import { InProcessStepFunctions } from "./inProcessStepFunctions";
import { type MemoryStore, startMemoryStore } from "./memoryStore";
import { inlineCodeAnalysis } from "./inlineCodeAnalysis";
import { launchTestPipeBrowser } from "./testBrowser";
import { InProcessSqs } from "./inProcessSqs";
import { RunEndWaiter } from "../../lambdas/runtime/aws/runEnds/runEndWaiter";
import { createRunEndNotifier } from "../../lambdas/runtime/aws/runEnds/notifyRunEnd";
import { createWaitQueueSweep } from "../../lambdas/runtime/aws/runEnds/sweepWaitQueues";

export const RECORDER_ARN = "arn:aws:lambda:eu-west-1:123456789012:function:bfn-run-recorder";
export const STATE_MACHINE_ARN = "arn:aws:states:eu-west-1:123456789012:stateMachine:bfn-runs";
export const DEAD_LETTER_URL = "https://sqs.eu-west-1.amazonaws.com/123456789012/bfn-run-dead-letters";

const FUNCTION_PREFIX = "bfn-";
const EXECUTION_ROLE_ID = "AROAEXAMPLEEXECUTION";
/** The wait queues' URL prefix (the stack's BROWSERFN_WAIT_QUEUE_URL_PREFIX). */
export const WAIT_QUEUE_URL_PREFIX = "https://sqs.eu-west-1.amazonaws.com/123456789012/bfn-wait-";
export const WAIT_QUEUE_TAGS = { "browserfn:stack": "bfn", "browserfn:purpose": "run-end-notices" };
export const SECRETS_KEY_ARN = "arn:aws:kms:eu-west-1:123456789012:key/11111111-2222-3333-4444-555555555555";

export interface AwsPipeline {
  runtime: Runtime;
  plans: Plans;
  /** KMS with the secrets key's grants; `secretBox` is the service's side of it. */
  kms: InProcessKms;
  secretBox: SecretBox;
  memory: MemoryStore;
  lambda: InProcessLambda;
  stepFunctions: InProcessStepFunctions;
  s3: InProcessS3;
  /** SQS: the waiting route's wait queue (its calls are `route`'s), the recorder's notices (`recorder`) and the sweeper's deletes (`sweeper`). */
  sqs: InProcessSqs;
  outcomes: OutcomeBucket;
  /** Profiles' states in the stand-in S3 (what the routes, the starters, the recorder and the sweeper use). */
  profileObjects: ProfileObjects;
  /** Lines the recorder and the sweeper logged. */
  logs: string[];
  /** The sweeper Lambda's handler, as its schedule invokes it. */
  sweep(): Promise<{ settled: number }>;
  /** The sweeper Lambda's handler, with any event (a deploy job's on-failure destination event). */
  sweeper: ReturnType<typeof makeRunSweeper>;
  /** Every StartExecution call, in order: who made it (`route`, `recorder`, `sweeper`, or a dispatcher's name) and its input. */
  starts: StartCall[];
  /**
   * Deps of another Lambda that dispatches the run queue (as the recorder and the sweeper do),
   * with a queue state of its own (another process); its StartExecution calls are `by` `name`.
   */
  dispatcher(name: string): Deps;
  /** Waits until every execution started so far has ended (and its status-change event was handled). */
  settled(): Promise<void>;
  close(): Promise<void>;
}

export interface StartCall {
  by: string;
  command: string;
  input: { stateMachineArn?: string; name?: string; input?: string };
}

export interface AwsPipelineOptions {
  /**
   * The run queue on AWS as the stack wires it: the recorder dispatches after each release
   * (unless `recorderDispatches` is false: a dispatcher that died after its release) and the
   * sweeper recovers queued runs. Default off (the route admits runs without the queue, and the
   * sweeper does not recover it; the recorder still dispatches, for retries).
   */
  queue?: boolean;
  recorderDispatches?: boolean;
  /** False: a recorder that never retries a run (as before retries on AWS). */
  retries?: boolean;
  /** Between two rounds of a run that waits for a throttled Lambda (default 50 ms; a minute on AWS). */
  throttleWaitMs?: number;
  /** The plans of the dispatchers and of the route deps (default DEFAULT_PLANS). */
  plans?: Plans;
  /** When it answers an error for a StartExecution call (who makes it, the run), the call fails with it: the SDK's answer once its retries ran out. */
  refuseStart?: (by: string, runId: string) => Error | undefined;
  /** Wraps the recorder (e.g. to make it fail); gets the real one. */
  recorder?: (real: ServiceLambda) => ServiceLambda;
  /** Scales the workflow's retry waits (default 0.001: a 64 s wait takes 64 ms). */
  timeScale?: number;
  /** The sweeper's clock (default the system's). */
  sweepClock?: Clock;
  runtime?: Partial<AwsRuntimeOptions>;
  /** Wraps the S3 client the recorder's recordings and the live view use (e.g. to watch the exact SDK calls). */
  spyS3?: (real: RecordingsS3) => RecordingsS3;
  /** More of the service's own Lambdas, by name or ARN (e.g. the deploy job). */
  services?: Record<string, ServiceLambda>;
  /** False: the route polls the record (RUN_READS) instead of waiting for the recorder's notice on a wait queue (default on, as the stack deploys it). */
  waitQueues?: boolean;
  /** The sweeper's clock for the wait queues' age (default Date.now). */
  sweepNow?: () => number;
  /** False: runs carry each secret as stored only, as a service before the run envelope sent them (default: the envelope too). */
  runDataKeys?: false;
}

/**
 * The AWS run pipeline with every AWS service stood in for in this process, and every part of
 * browserfn real: the AWS runtime adapter starts executions of the real run workflow definition
 * (interpreted by InProcessStepFunctions), which invokes the function's Lambda (the real runner
 * in InProcessLambda, with a real browser) and then the real recorder; outcomes too big for
 * the workflow go through presigned URLs to a stand-in S3 on 127.0.0.1; failed executions
 * reach the real sweeper. The store is dynalite.
 */
export async function startAwsPipeline(options: AwsPipelineOptions = {}): Promise<AwsPipeline> {
  const dir = await mkdtemp(path.join(tmpdir(), "browserfn-aws-"));
  await chmod(dir, 0o755);
  const memory = await startMemoryStore();
  const s3 = await new InProcessS3().start();
  const s3Client = s3.client();
  const outcomes = createS3OutcomeBucket(s3Client, "bfn-run-bucket");
  // Profiles' states beside the outcomes, SSE-KMS with the stack's key (the secrets key).
  const profileObjects = createS3ProfileObjects(s3Client, "bfn-run-bucket", SECRETS_KEY_ARN);
  const profiles = { store: memory.store, objects: profileObjects };
  const logs: string[] = [];
  const log = (line: string) => void logs.push(line);
  const kms = new InProcessKms(SECRETS_KEY_ARN, EXECUTION_ROLE_ID);
  const runnerOf = (functionId: string) => runnerSession(EXECUTION_ROLE_ID, lambdaFunctionName(FUNCTION_PREFIX, functionId));
  const secretBox = createKmsSecretBox(kms.client("service"), SECRETS_KEY_ARN, runnerOf);
  // Runs' secrets under their function's data key, as the stack seals them (one per pipeline: the service's Lambdas share it here).
  const runDataKeys = options.runDataKeys === false ? undefined : createRunDataKeys(kms.client("service"), SECRETS_KEY_ARN);
  const starts: StartCall[] = [];
  // Built below (the workflow needs the recorder, whose dispatcher starts executions of it).
  const late: { stepFunctions?: InProcessStepFunctions } = {};
  const spy = (by: string): StepFunctionsLike => ({
    send: (command) => {
      const input = command.input as { stateMachineArn?: string; name?: string; input?: string };
      starts.push({ by, command: command.constructor.name, input });
      const refused = options.refuseStart?.(by, String(input.name));
      if (refused) return Promise.reject(refused);
      return (late.stepFunctions as InProcessStepFunctions).send(command);
    },
  });
  const dispatcher = (name: string, clock: Clock = systemClock) =>
    createDispatcherDeps({
      store: memory.store,
      clock,
      log,
      secretBox,
      outcomes,
      stepFunctions: spy(name),
      profileObjects,
      ...(runDataKeys ? { runDataKeys } : {}),
      dispatch: { plans: options.plans ?? DEFAULT_PLANS, stateMachineArn: STATE_MACHINE_ARN, secrets: { secretsKeyArn: SECRETS_KEY_ARN, functionPrefix: FUNCTION_PREFIX, executionRoleId: EXECUTION_ROLE_ID } },
    });
  // The recorder's dispatcher: it starts queued runs after a release, and queues a failed attempt's run again (retries).
  const recorderDeps = dispatcher("recorder");
  // (Without `queue` nothing is ever queued but a retry's next attempt, which its workflow's WakeQueue has the recorder start.)
  const recorderDispatch = options.recorderDispatches !== false ? { dispatch: awsQueueDispatch(recorderDeps) } : {};
  const retry = options.retries === false ? {} : { retry: awsAttemptRetry(recorderDeps, spy("recorder")) };
  const spiedS3 = options.spyS3 ? options.spyS3(s3Client) : s3Client;
  const recordings = createS3UploadedRecordings(spiedS3, "bfn-run-bucket");
  const sqs = new InProcessSqs();
  const notifyEnd = createRunEndNotifier({ sqs: sqs.client("recorder"), urlPrefix: WAIT_QUEUE_URL_PREFIX, log });
  const recorder = makeRunRecorder({ store: memory.store, clock: systemClock, log, outcomes, recordings, secretBox, profiles, ...recorderDispatch, ...retry, throttleWaitMs: options.throttleWaitMs ?? 50, notifyEnd });
  const sweepDispatcher = options.queue ? dispatcher("sweeper", options.sweepClock) : undefined;
  const sweeper = makeRunSweeper({
    store: memory.store,
    clock: options.sweepClock ?? systemClock,
    log,
    profiles,
    ...(sweepDispatcher ? { dispatch: awsQueueDispatch(sweepDispatcher), sweepQueues: awsQueueRecovery(sweepDispatcher) } : {}),
    sweepWaitQueues: createWaitQueueSweep({ sqs: sqs.client("sweeper"), urlPrefix: WAIT_QUEUE_URL_PREFIX, now: options.sweepNow ?? Date.now, log }),
    notifyEnd: createRunEndNotifier({ sqs: sqs.client("sweeper"), urlPrefix: WAIT_QUEUE_URL_PREFIX, log }),
  });
  const recorderLambda: ServiceLambda = (payload) => recorder(payload);
  const lambda = new InProcessLambda(
    dir,
    { ...options.services, [RECORDER_ARN]: options.recorder ? options.recorder(recorderLambda) : recorderLambda },
    launchTestPipeBrowser,
    (functionName) => kms.client(runnerSession(EXECUTION_ROLE_ID, functionName)) as LambdaHandlerOptions["kms"],
  );
  // Runs of the queue's tests overlap in the workflow; in this one process their invocations take turns.
  lambda.oneRunAtATime = options.queue === true;
  const definition = JSON.stringify(runWorkflowDefinition())
    .replaceAll(`\${${WORKFLOW_SUBSTITUTIONS.recorderArn}}`, RECORDER_ARN)
    .replaceAll(`\${${WORKFLOW_SUBSTITUTIONS.deadLetterUrl}}`, DEAD_LETTER_URL);
  const stepFunctions = new InProcessStepFunctions(definition, lambda, {
    stateMachineArn: STATE_MACHINE_ARN,
    timeScale: options.timeScale ?? 0.001,
    onStatusChange: async (event) => void (await sweeper(event)),
  });
  late.stepFunctions = stepFunctions;
  const runtime = createAwsRuntime({
    lambda,
    stepFunctions: options.queue ? spy("route") : stepFunctions,
    stateMachineArn: STATE_MACHINE_ARN,
    outcomes,
    runs: memory.store.runs,
    profiles,
    functionPrefix: FUNCTION_PREFIX,
    executionRoleArn: "arn:aws:iam::123456789012:role/fn",
    executionRoleId: EXECUTION_ROLE_ID,
    layerArns: [],
    logGroup: "/browserfn/test/functions",
    pollIntervalMs: 1,
    runPollIntervalMs: 25,
    ...(runDataKeys ? { runDataKeys } : {}),
    // GET /runs/{id}/live as the stack wires it (routeDeps/liveRouteDeps.ts): the watch marker and the latest frame in the bucket.
    watchFrames: createS3LiveWatch(spiedS3, "bfn-run-bucket", { pollMs: 1_000, log }),
    ...(options.waitQueues === false ? {} : { endNotices: new RunEndWaiter({ sqs: sqs.client("route"), urlPrefix: WAIT_QUEUE_URL_PREFIX, tags: WAIT_QUEUE_TAGS, log }) }),
    ...options.runtime,
  });
  const settled = async () => {
    await stepFunctions.settled();
    await lambda.settled();
  };
  return {
    runtime,
    plans: options.plans ?? DEFAULT_PLANS,
    kms,
    secretBox,
    memory,
    lambda,
    stepFunctions,
    s3,
    sqs,
    outcomes,
    profileObjects,
    logs,
    starts,
    dispatcher: (name) => dispatcher(name),
    sweep: () => sweeper({ "detail-type": "Scheduled Event" }),
    sweeper,
    settled,
    async close() {
      await settled();
      await runtime.close();
      await lambda.close();
      s3Client.destroy();
      await s3.close();
      await memory.close();
      await rm(dir, { recursive: true, force: true });
    },
  };
}

/**
 * What the route handlers get on AWS, over `pipeline`: its store, runtime and secret box, no
 * identity (the events carry the authorizer's principal) and no scheduler, the pro plan's
 * defaults, the sync window of `syncWaitSeconds`, and log lines into `pipeline.logs`.
 */
export function pipelineRouteDeps(
  pipeline: AwsPipeline,
  options: { syncWaitSeconds: number; clock?: Clock; deployJobs?: Deps["deployJobs"]; queue?: RunQueueState },
): Deps {
  const unused = () => Promise.reject(new Error("not used here"));
  return {
    store: pipeline.memory.store,
    identity: { authenticate: unused, forget: () => undefined },
    runtime: pipeline.runtime,
    queue: options.queue ?? new RunQueueState({ enabled: false }),
    scheduler: { check: () => undefined, sync: async () => undefined, remove: async () => undefined, close: async () => undefined },
    codeAnalysis: inlineCodeAnalysis,
    clock: options.clock ?? systemClock,
    secretBox: pipeline.secretBox,
    config: { plans: pipeline.plans, publicUrl: null, syncWaitSeconds: options.syncWaitSeconds, maxBodyBytes: MAX_BODY_BYTES },
    log: (line: string) => void pipeline.logs.push(line),
    profileBlobs: s3ProfileRemoval(pipeline.memory.store.profileStates, pipeline.profileObjects),
    ...(options.deployJobs ? { deployJobs: options.deployJobs } : {}),
  };
}
