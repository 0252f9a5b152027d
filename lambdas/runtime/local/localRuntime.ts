import { DEFAULT_MEMORY_MB } from "../../functions/settings";
import { ApiError } from "../../http/errors";
import type { Store } from "../../store/store";
import type { InvokeHooks, InvokeRequest, InvokeResult, Runtime } from "../runtime";
import { canceledError } from "../../runs/cancel/canceledEnding";
import { withoutHostPaths } from "./hostPaths";
import { LiveRuns } from "./liveRuns";
import { recordingModeOf } from "../../recording/recordingMode";
import { RunCancels } from "./runCancels";
import type { LocalArtifacts } from "./localArtifacts";
import { runWithLimits } from "./runWithLimits";
import type { Sandbox } from "./sandbox/sandbox";
import { type CpuPlacement, type RuntimeFiles, SandboxStartFailure, startSandboxedHost } from "./sandbox/sandboxedHost";
import type { CpuShares } from "./cpuShares/cpuShares";
import { ResultParser } from "./resultParsing/resultParser";
import { WORKER_UIDS } from "./sandbox/workerUids";
import { type PoolLimits, WorkerPool } from "./workerPool";
import { type WorkerOptions, WorkerProcess } from "./workerProcess";
import type { Profiles } from "../../profiles/profileBlobs";
import { runBrowserState } from "../../profiles/runBrowserState";

export interface LocalRuntimeOptions {
  store: Store;
  /** The bundles, Chromium's files, and where sandboxes are made (outside the data dir). */
  files: RuntimeFiles;
  sandbox: Sandbox;
  limits: PoolLimits;
  /** Where runs' artifacts are kept; absent: runs keep none. */
  artifacts?: LocalArtifacts;
  /** Where profiles are kept (absent: runs cannot open any). */
  profiles?: Profiles;
  /** Where the service's own diagnostics go (the full reasons that users see without host paths). */
  log?: (line: string) => void;
  /** Weighs each account's sandboxes for CPU as one (absent: every sandbox weighs as itself). */
  cpuShares?: CpuShares;
  /**
   * The thread for the service's costly work on results, accounts in turn, shared with the
   * webhooks' body building; its giver closes it (absent: the runtime makes one, and closes it).
   */
  parser?: ResultParser;
}

/**
 * Starts worker sandboxes for functions of `memoryMb` (the size of each of their file systems),
 * each under a uid of its own when the service runs as root.
 */
export function hostStarter(sandbox: Sandbox, files: RuntimeFiles, memoryMb: number, placeCpu?: CpuPlacement): WorkerOptions["startHost"] {
  return async () => {
    const uid = sandbox.uidPerWorker ? WORKER_UIDS.acquire() : undefined;
    const release = () => {
      if (uid !== undefined) WORKER_UIDS.release(uid);
    };
    try {
      // Once more after a sandbox that failed as it started: the kernel's namespace setup can fail
      // for a moment under heavy churn (bubblewrap's loopback "Failed RTM_NEWADDR", a sandbox gone
      // before its routes were set); a second failure is the worker's failure to start.
      const host = await startSandboxedHost(sandbox, files, uid, memoryMb, placeCpu).catch((error: unknown) => {
        if (!(error instanceof SandboxStartFailure)) throw error;
        return startSandboxedHost(sandbox, files, uid, memoryMb, placeCpu);
      });
      return { host, release };
    } catch (error) {
      release();
      throw error;
    }
  };
}

/**
 * The local runtime adapter: warm worker processes per function version (see WorkerPool),
 * each in a sandbox of its own with its own browser. Workers load a version's compiled code
 * from the store when they start, so a deploy has nothing to provision.
 */
export function createLocalRuntime(options: LocalRuntimeOptions): Runtime & { pool: WorkerPool; live: LiveRuns; taken: RunCancels; parser: ResultParser } {
  // A sandbox's file systems are sized for its function's memory_mb when it starts: the latest
  // invocation's, by function; a worker sized for another (memory_mb changed) is not reused.
  const memoryOf = new Map<string, number>();
  /** Whose each function is (told by its invocations): its sandboxes go under that account's CPU share. */
  const accountOf = new Map<string, string>();
  const sizedFor = new WeakMap<WorkerProcess, number>();
  /** The profile names each version's code gives literally (read with its code when its worker starts). */
  const profileNames = new Map<string, readonly string[]>();
  // Workers' big frames (their runs' results) are parsed on a thread of its own, accounts in turn.
  const parser = options.parser ?? new ResultParser();
  // The service's work on an account's big results counts against that account's CPU share.
  if (options.cpuShares) parser.chargeTo(options.cpuShares);
  const startWorker = async (functionId: string, version: number) => {
    const code = await options.store.versions.get(functionId, version);
    if (!code) throw new ApiError("version_not_found", `Version ${version} of ${functionId} is gone`);
    profileNames.set(`${functionId}#${version}`, code.profile_names ?? []);
    const memoryMb = memoryOf.get(functionId) ?? DEFAULT_MEMORY_MB;
    const { cpuShares } = options;
    const account = accountOf.get(functionId);
    const placeCpu = cpuShares && account !== undefined ? (pids: readonly number[]) => cpuShares.place(account, pids) : undefined;
    const worker = await WorkerProcess.start({
      startHost: hostStarter(options.sandbox, options.files, memoryMb, placeCpu),
      init: { code: code.js, parameter_style: code.parameter_style ?? "positional", variables: code.variables },
      parser,
    });
    sizedFor.set(worker, memoryMb);
    return worker;
  };
  const pool = new WorkerPool(options.limits, startWorker);
  const live = new LiveRuns();
  const taken = new RunCancels();
  return {
    pool,
    live,
    taken,
    parser,
    // A failed run's next attempt goes through the run queue (launchRun's end: endAttempt).
    retries: true,
    async deploy() {
      return { status: "active", status_reason: null };
    },
    async invoke(request, hooks) {
      memoryOf.set(request.fn.function_id, request.fn.memory_mb);
      accountOf.set(request.fn.function_id, request.fn.account_id);
      const cancel = taken.take(request.runId);
      try {
        return await invokeTaken(request, hooks, cancel.signal, cancel.running);
      } finally {
        cancel.end();
      }
    },
    // A run dropped before its code started is the canceller's to record, as one not here.
    cancel: async (runId) => ((await taken.cancel(runId)) === "stopped" ? "stopped" : "not_here"),
    watchLogs: (runId, onChange) => live.watch(runId, onChange),
    watchFrames: (runId, onFrame, onEnd) => live.watchFrames(runId, onFrame, onEnd),
    async remove(fn) {
      memoryOf.delete(fn.function_id);
      accountOf.delete(fn.function_id);
      await pool.removeFunction(fn.function_id);
    },
    close: async () => {
      await pool.close();
      // Leases given back after their runs' answers are back before the store closes.
      await options.profiles?.releases?.drain();
      if (!options.parser) await parser.close();
    },
  };

  /** One invocation, once taken: `canceled` stops it wherever it is (waiting, starting, running). */
  async function invokeTaken(request: InvokeRequest, hooks: InvokeHooks, canceled: AbortSignal, running: () => void): Promise<InvokeResult> {
    // No 429 for a busy machine: the admitted run waits for a worker (it stays `queued`, `machine_busy`).
    const lease = await pool.acquire(request.fn.function_id, request.version, Number.POSITIVE_INFINITY, request.fn.account_id, () => {
      void hooks.onWaiting?.("machine_busy");
    });
    let finished: Promise<boolean> = Promise.resolve(false);
    try {
      if (canceled.aborted) {
        // Canceled while it waited for a worker: it never starts, and the slot goes back as it came.
        finished = Promise.resolve(true);
        return canceledBeforeStart();
      }
      if (!lease.warm) await hooks.onQueued();
      let worker: WorkerProcess;
      try {
        worker = await lease.worker();
      } catch (error) {
        // The reason as users see it names no host path (the runtime's folder, the sandbox's).
        options.log?.(`run ${request.runId}: its worker could not start: ${(error as Error).stack ?? error}`);
        const message = `The function's worker could not start: ${withoutHostPaths((error as Error).message)}`;
        return { status: "failed", result_json: null, error: { code: "function_crashed", message }, logs: "", duration_ms: 0, browser_ms: 0, peak_memory_mb: null };
      }
      if (canceled.aborted) {
        finished = Promise.resolve(true);
        return canceledBeforeStart();
      }
      running();
      await hooks.onRunning();
      const receiver = options.artifacts?.receiver({ run_id: request.runId, account_id: request.fn.account_id, function_id: request.fn.function_id, attempt: request.attempt ?? 1, secrets: Object.values(request.secrets?.values ?? {}) });
      // The room the run is told of (a store that fails here tells it none: the service still counts each file).
      const storageBytesLeft = await options.artifacts?.bytesLeft(request.fn.account_id).catch(() => undefined);
      const limits = { timeoutMs: request.fn.timeout_seconds * 1000, memoryMb: request.fn.memory_mb };
      const following = live.start(request.runId, worker);
      const { profiles, proxy } = runBrowserState(options.profiles, request.fn, {
        runId: request.runId,
        timeoutMs: limits.timeoutMs,
        literalNames: profileNames.get(`${request.fn.function_id}#${request.version}`) ?? [],
        secrets: request.secrets?.values ?? {},
      });
      let run;
      let profilesFinished = false;
      try {
        run = await runWithLimits(
          worker,
          request.runId,
          request.params,
          limits,
          {
            artifactsUrl: request.artifactsUrl,
            artifacts: receiver,
            onLog: following.notify,
            onFrame: following.onFrame,
            recording: recordingModeOf(request.fn.recording),
            secrets: request.secrets?.values ?? {},
            account: request.fn.account_id,
            ...(storageBytesLeft === undefined ? {} : { storageBytesLeft }),
            ...(proxy ? { proxy } : {}),
            ...(profiles ? { profiles } : {}),
          },
          canceled,
        );
        // Profiles saved by a run that succeeded are kept now (or fail it: profile_too_large); leases go back either way.
        profilesFinished = true;
        const refused = await profiles?.finish(run.result.status === "succeeded");
        if (refused) run = { ...run, result: { ...run.result, status: "failed" as const, result_json: null, error: refused } };
      } finally {
        if (!profilesFinished) await profiles?.finish(false).catch(() => undefined);
        following.end();
        // Every artifact the run kept is recorded before its end is.
        await receiver?.finish();
      }
      const sized = worker;
      finished = run.finished.then((reusable) => reusable && sizedFor.get(sized) === limits.memoryMb);
      lease.answered();
      return run.result;
    } finally {
      // The slot is given back when the worker is idle again (or gone), not at the answer.
      void finished.then((reusable) => lease.release(reusable));
    }
  }
}

/** The end of a run canceled before its code started: nothing ran, nothing to meter. */
function canceledBeforeStart(): InvokeResult {
  return { status: "canceled", result_json: null, error: canceledError(), logs: "", duration_ms: 0, browser_ms: 0, peak_memory_mb: null };
}
