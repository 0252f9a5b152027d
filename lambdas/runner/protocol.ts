/**
 * Messages between the supervising service, a worker's sandbox host (hostMain) and the
 * worker (workerMain). A worker serves one function version, one invocation at a time.
 *
 *   service ──frames on fd 3──▶ host ──Node IPC──▶ worker (one per run, see hostMain)
 *
 * The service parses every frame it reads as untrusted (workerChannel.ts): the worker runs
 * user code, and the host shares its sandbox. The host relays only what a worker may say, and
 * a `done` only with the token it gave that worker (see privateChannel/takeChannel.ts).
 */
import type { ParameterInfo, ParameterStyle } from "../code/extractParameters";
import { MAX_LOG_BYTES, MAX_RESULT_BYTES } from "./outputLimits";
import type { RecordingMode } from "../recording/recordingMode";
import type { RunProxy } from "../../layers/runtime/sessionProxy";

/** What a worker needs to serve a version; the first message it receives. */
export interface WorkerInit {
  type: "init";
  /** The version's compiled CommonJS code. */
  code: string;
  /** How the code takes its parameters (CompiledCode.parameter_style). */
  parameter_style: ParameterStyle;
  /** The version's parameters in declaration order: positional calls pass them in this order. */
  variables: ParameterInfo[];
  /** Where the browser's downloads land (set by the host): the worker keeps them as artifacts. */
  downloads_dir?: string;
  /** Set by the host: the secret this worker process's `done` carries (the host drops a `done` without it). */
  token?: string;
}

/** How the host starts the browser: paths as the sandbox sees them. */
export interface BrowserSpec {
  executable: string;
  args: string[];
  env: Record<string, string>;
  /** The browser's profile: emptied before each start. */
  profileDir: string;
  /** Pass the worker's CDP commands through cdpGuard (the process sandbox: the browser sees the machine's files). */
  guard: boolean;
}

/** The first frame a host receives: what to start, and the worker's init. */
export interface HostInit {
  type: "host_init";
  worker: { bundle: string };
  browser: BrowserSpec;
  /**
   * Folders the host empties after each run, besides the browser's downloads folder (mounts in
   * them and the profile kept): the namespaces sandbox's private file systems. None in the
   * process sandbox, whose /tmp is the machine's.
   */
  scratchDirs: string[];
  init: Omit<WorkerInit, "type">;
}

export interface RunRequest {
  type: "run";
  runId: string;
  /** Parameters by name, already validated and coerced against the version's variables. */
  params: Record<string, unknown>;
  /** The function's timeout; sessions never outlive it. */
  timeoutMs: number;
  /** The function's memory_mb: a browser session below BROWSER_MIN_MEMORY_MB is refused (`insufficient_memory`). */
  memoryMb?: number;
  /** Where the run's artifacts are served: the name is appended (what `artifacts.save` answers as `url`). */
  artifactsUrl: string;
  /** The function's secrets by name (`secrets.get`); their values are redacted from what the run sends back. */
  secrets: Record<string, string>;
  /** Bytes the account may still keep (its plan's storage cap less what it holds): `artifacts.save` refuses past them. */
  storageBytesLeft?: number;
  /** The function's `recording` setting (absent: off). */
  recording?: RecordingMode;
  /** The function's proxy, its password read from the function's secrets (absent: none). */
  proxy?: RunProxy;
}

/** The service to the worker (through its host): someone watches the run's live view (`on`), or no one does any more. */
export interface LiveRequest {
  type: "live";
  runId: string;
  on: boolean;
}

/**
 * The service's answer to a `profile_open`, in parts: the profile's state (base64, at most
 * ARTIFACT_CHUNK_BYTES a part, the last with `last`), or one part with `error`.
 */
export interface ProfileReply {
  type: "profile_reply";
  id: number;
  data: string;
  last: boolean;
  error?: { code: string; message: string };
}

/**
 * The host's answer to a `browser_request`: the two ends of the browser's CDP pipe, each in
 * a message of its own with the socket as the message's handle (or one socket for both ways,
 * `both`, when the host guards the commands), or why there is no browser.
 */
export type BrowserReply = { type: "browser_pipe"; end: "write" | "read" | "both"; kept?: boolean } | { type: "browser_failed"; message: string };

/** The host's word that the worker's browser exited on its own (its exit and last output). */
export interface BrowserExited {
  type: "browser_exited";
  detail: string;
}

export type SupervisorMessage = WorkerInit | RunRequest | BrowserReply | BrowserExited | LiveRequest | ProfileReply;

/** `function_timeout`: the Lambda runner stopped a run at its deadline (a local worker is killed instead). */
export type ErrorCode = "function_error" | "result_not_serializable" | "result_too_large" | "result_too_deep" | "function_timeout" | "profile_too_large" | "insufficient_memory" | "out_of_memory";

export type RunOutcome = (
  | { status: "succeeded"; result_json: string; logs: string; browser_ms: number }
  | { status: "failed"; error: { code: ErrorCode; message: string; stack?: string }; logs: string; browser_ms: number }
) & {
  /**
   * The most memory (MB, proportional set size) the runner's process and its browser used
   * during the run, sampled: sent by the Lambda handler. A local worker sends none: the
   * service measures it from outside.
   */
  peak_memory_mb?: number;
  /** The artifacts the run saved (the Lambda runner: the recorder checks each in S3). */
  artifacts?: string[];
  /** Profiles the run tried to save over the 50 MB cap (the Lambda runner: the recorder fails a run that succeeded with profile_too_large). */
  profiles_too_large?: string[];
};

export type WorkerMessage =
  | { type: "ready" }
  | { type: "browser_request" }
  /** Worker to host only: the browser the host started early is connected and has opened and closed a page. */
  | { type: "browser_warm" }
  | { type: "init_failed"; message: string }
  | ({ type: "done"; runId: string; /** worker to host only: see WorkerInit.token */ token?: string } & { outcome: RunOutcome })
  /**
   * Console output of the run in progress, as it is written (batched per turn of the event
   * loop): the service keeps it, so a run that times out or crashes keeps what it logged.
   */
  | { type: "log"; runId: string; text: string }
  /**
   * A part of an artifact of the run in progress (`artifacts.save`, failure evidence): its bytes
   * in base64, at most ARTIFACT_CHUNK_BYTES; one artifact's parts in a row, the last with `last`.
   */
  | { type: "artifact"; runId: string; name: string; content_type: string; data: string; last: boolean }
  /** A frame of the live view of the run in progress, while someone watches (lambdas/live). */
  | { type: "frame"; runId: string; data: string; url: string; width: number; height: number }
  /** A session opens profile `name` (`persist`: as its writer); the service answers with `profile_reply` parts. */
  | { type: "profile_open"; runId: string; id: number; name: string; persist: boolean }
  /**
   * A part of the state a `persist` session saves into profile `name` (kept if the run succeeds);
   * `too_large`: the state is over the cap, nothing more is sent (the run fails profile_too_large).
   */
  | { type: "profile_save"; runId: string; name: string; data: string; last: boolean; too_large?: boolean }
  /**
   * After `done`, said by the host: the run's worker process and browser are replaced and a
   * fresh one is ready for the next run. `leftover` names what could not be cleared (the
   * whole sandbox is then replaced rather than reused).
   */
  | { type: "idle"; runId: string; leftover: string[] };

/**
 * The service to the host (not passed on to the worker): the run `runId` is past its timeout
 * and its worker has not answered, or it was canceled (`canceled`); keep what its pages show
 * within `budgetMs`, then say `evidence_done`.
 */
export interface CaptureEvidence {
  type: "capture_evidence";
  runId: string;
  budgetMs: number;
  /** Why the run is stopped (the evidence's log lines say it): its timeout passed unanswered (default), or it was canceled. */
  why?: "stuck" | "canceled";
}

/** What the host itself says. */
export type HostMessage =
  | { type: "worker_exit"; code: number | null; signal: string | null }
  | { type: "oversize"; bytes: number }
  | { type: "evidence_done"; runId: string }
  /**
   * The host's standby worker process (pid as the host sees it; 0: none, it ended): a process
   * that holds the runtime and the parsed code, has run none of it, and takes the next run.
   * Said when it starts (`ready` false) and when it is ready (true). The service leaves it out
   * of the current run's memory (see TreeMeter.exclude), and freezes an idle sandbox only once
   * it is ready (or gone).
   */
  | { type: "standby"; pid: number; ready: boolean };

/**
 * The largest frame the service reads: a full result (JSON text, at most twice as long once
 * escaped into the message) and logs (six bytes per control character at worst), with room to spare.
 */
export const MAX_FRAME_BYTES = 2 * MAX_RESULT_BYTES + 8 * MAX_LOG_BYTES + 64 * 1024;

/** Console output kept per run; the rest is cut with a note. */
export { MAX_LOG_BYTES } from "./outputLimits";
