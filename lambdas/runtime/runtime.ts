import type { FunctionItem, FunctionStatus, VersionWithCode } from "../functions/types";
import type { RunError, RunItem } from "../runs/types";
import type { StoredSecret } from "../store/secretStore";
import type { ScreenFrame } from "../live/liveFrames";

export interface DeployResult {
  status: FunctionStatus;
  status_reason: string | null;
}

export interface InvokeRequest {
  fn: FunctionItem;
  version: number;
  runId: string;
  /** Validated parameters by name. */
  params: Record<string, unknown>;
  /** How long the caller waits for the run (its sync window); a run waiting for a worker waits on past it (queued). */
  waitMs: number;
  /** Where the run's artifacts are served (`…/runs/<run_id>/artifacts/`): what `artifacts.save` answers, with the name appended. */
  artifactsUrl: string;
  /**
   * Aborted when the caller stops waiting for the run's end (it answered 202). A runtime whose
   * runs are recorded by someone else (AWS) stops watching the run then, and `invoke` never
   * settles; one that records them through its caller (local) ignores it.
   */
  signal?: AbortSignal;
  /** The function's secrets (absent: none). */
  secrets?: RunSecrets;
  /** Which attempt of the run this is (lambdas/retries; absent: the first): its artifacts say so. */
  attempt?: number;
  /**
   * Where the run's end is to be told besides (a run out of the queue whose sync caller waits
   * for it in another process: Runtime.watchQueuedEnd's `notify`). A runtime whose caller sees
   * the end itself (local) ignores it.
   */
  notify?: string;
}

/** A sync caller's watch for the end of its run while the run waits in the queue (Runtime.watchQueuedEnd). */
export interface QueuedEndWatch {
  /** What the queued run carries to whoever starts it (InvokeRequest.notify). */
  notify: string;
  /**
   * Settles with the run's final record once its end was told within the caller's window;
   * never when it was not (the caller answers 202), or once `close` was called.
   */
  end: Promise<RunItem>;
  /** Stops watching (the run was not queued after all). */
  close(): void;
}

/**
 * A function's secrets for one run: their values, which the service redacts from whatever the
 * run sends back (a local runtime also hands them to its worker), and the same secrets as
 * stored, sealed (AWS: the function's Lambda opens them itself, so no plaintext travels
 * through the run workflow).
 */
export interface RunSecrets {
  values: Readonly<Record<string, string>>;
  sealed: readonly StoredSecret[];
}

/**
 * Called as the run moves on (the run's queued record exists before `invoke` is called). The
 * first hook called tells the caller that the runtime has taken the run: from then on it ends
 * with a final record; an `invoke` that throws before any hook leaves the run never started.
 */
export interface InvokeHooks {
  /** A slot is reserved but the run waits for a cold start (not called for a warm start). */
  onQueued(): Promise<void>;
  /**
   * The run is admitted but waits for the machine (local: every worker busy): it stays `queued`
   * and starts when the pool grants it a worker, fairly between accounts. Optional for runtimes
   * that never wait (AWS).
   */
  onWaiting?(reason: "machine_busy"): Promise<void>;
  /** The automation starts now (AWS: Lambda has its event). */
  onRunning(): Promise<void>;
}

/** How a run ended. `error.code` is one of the API's run error codes. */
export interface InvokeResult {
  status: "succeeded" | "failed" | "timed_out" | "canceled";
  result_json: string | null;
  error: RunError | null;
  logs: string;
  duration_ms: number;
  browser_ms: number;
  peak_memory_mb: number | null;
}

/**
 * A run's console output as the runtime receives it while the run goes on (Runtime.watchLogs).
 * Only the runtime holds the text: this reads it, and keeps no copy of its own.
 */
export interface LiveLogs {
  /** The run's console output so far; it only grows while the run goes on ("" once it ended). */
  text(): string;
  /** True once the run's outcome is in here: its final record is being written, read the store from then on. */
  readonly ended: boolean;
  /** Stops the notifications (safe to call more than once; an ended run has dropped them already). */
  close(): void;
}

/** A watcher of a run's live view (Runtime.watchFrames). */
export interface LiveFrames {
  /** Stops watching (safe to call more than once); the last watcher to leave stops the screencast. */
  close(): void;
}

/** Asked before each change a deploy makes; throws to stop it (a deploy job superseded by a newer deploy). */
export type DeployGuard = () => Promise<void>;

/**
 * The runtime port: where function code is provisioned and run.
 * Adapters: local worker processes, AWS Lambda.
 */
export interface Runtime {
  /**
   * Makes a new version runnable and says what status the function record takes. `guard`, when
   * given, is awaited before each change the runtime makes (AWS: each control-plane call that
   * changes the Lambda); what it throws ends the deploy there and is thrown on.
   */
  deploy(fn: FunctionItem, version: VersionWithCode, guard?: DeployGuard): Promise<DeployResult>;
  /**
   * Applies a settings-only change (memory_mb, timeout_seconds) to a deployed function and says
   * what status its record takes. Call it after such a change is stored, when no new version
   * comes with it (a new version's `deploy` applies the current settings itself). Runtimes
   * that read the settings at each invocation (local) leave it out: nothing to do there.
   */
  configure?(fn: FunctionItem, guard?: DeployGuard): Promise<DeployResult>;
  /**
   * Runs one invocation and resolves with how it ended; throws 429 before `onQueued` when no
   * capacity frees up in time. An adapter may have the run's end recorded by someone else (AWS:
   * the run workflow's recorder writes it, and invoke resolves once the record is final): the
   * caller ends runs with finishRun, which keeps a record that is final already.
   */
  invoke(request: InvokeRequest, hooks: InvokeHooks): Promise<InvokeResult>;
  /**
   * For a sync caller whose run goes to the run queue: listens for the run's end for the
   * caller's window (`waitMs`, or until `signal` aborts) where the run may be started by another
   * process (AWS: the recorder or the sweeper dispatches it, and the run's end is recorded
   * there). Null when nothing can be listened to. Absent from runtimes whose queued runs end
   * where their caller hears them (local: RunQueueState).
   */
  watchQueuedEnd?(runId: string, waitMs: number, signal?: AbortSignal): Promise<QueuedEndWatch | null>;
  /**
   * True where a canceled run's code may run on after its cancel (AWS: a Lambda invocation cannot
   * be stopped): when `invoke` answers such a run `canceled`, its caller keeps the run's slot
   * taken (its lease lapses after the invocation's latest end). Absent: a canceled run has
   * stopped, and its slot goes back.
   */
  canceledRunsRunOn?: boolean;
  /**
   * Follows the console output of a run in progress on this instance: `onChange` is called (with
   * nothing: read `text()`) as the output grows, and once when the run ends here. Undefined when
   * this instance does not run it now (not started yet, ended, another instance's run), and absent
   * from runtimes that cannot (AWS): callers read the store instead.
   */
  watchLogs?(runId: string, onChange: () => void): LiveLogs | undefined;
  /**
   * Watches the live view of a run in progress on this instance: `onFrame` gets each frame (a
   * JPEG of the page being driven, parsed and rate-limited), `onEnd` is called once when the run
   * ends here. The run's browser screencasts only while someone watches. Undefined when this
   * instance does not run it now. `after`: the id of the last frame the watcher got (its
   * Last-Event-ID), not sent again (AWS, where frames have ids; docs/deploy.md "Live view on AWS").
   */
  watchFrames?(runId: string, onFrame: (frame: ScreenFrame) => void, onEnd: () => void, after?: string): LiveFrames | undefined;
  /**
   * Stops a run after POST /runs/{run_id}/cancel. `stopped`: the run ran on this instance and
   * has stopped (locally: its worker, browser and sandbox are gone, its evidence kept); its
   * `invoke` answered `canceled`, and the caller of `invoke` records that end. `not_here`: this
   * instance does not run it (not taken yet, another instance's run, or a runtime whose runs
   * are recorded by someone else: AWS, where the run's workflow is stopped here and the
   * Lambda invocation it started runs on until it returns); the canceller records the end.
   */
  cancel?(runId: string): Promise<"stopped" | "not_here">;
  /**
   * True when a failed run of this runtime may be retried (locally its attempts' ends go through
   * endAttempt, on AWS through the run recorder: docs/deploy.md, "Retries on AWS"). Absent:
   * every run gets one attempt, and its record says `max_attempts: 1`.
   */
  readonly retries?: boolean;
  /** Releases everything the runtime holds for a deleted function. */
  remove(fn: FunctionItem): Promise<void>;
  /** Stops every process the runtime started. */
  close(): Promise<void>;
}
