import type { Browser } from "puppeteer-core";
import type { Browser as PlaywrightBrowser } from "playwright-core";
import type { PageOpened } from "../../lambdas/recording/pageTarget";
import type { RunProxy } from "./sessionProxy";
import type { EvidencePage } from "./drivers/driverContext";

/** What one open session gives its run when the run ends. */
export interface OpenSession {
  close(): Promise<void>;
  /** Its open pages (for the evidence of a failed run). */
  pages(): Promise<EvidencePage[]>;
}

/** Where a run's artifacts go: the service's store (local, through the worker's channel) or S3 (AWS). */
export interface ArtifactSink {
  save(name: string, data: Uint8Array, contentType: string): Promise<{ name: string; url: string; bytes: number }>;
}

/**
 * Where a run's sessions open and save profiles: the service (local: through the worker's
 * channel), which checks the name against what the function may open and holds the writer's lease.
 */
export interface ProfileChannel {
  /** The profile's saved state (empty when it has none yet); rejects with ProfileLockedError or ProfileError. */
  open(name: string, persist: boolean): Promise<Uint8Array>;
  /** Hands the session's state to the service: it becomes the profile's if the run succeeds. */
  save(name: string, state: Uint8Array): Promise<void>;
}

/** How long a run's end waits for downloads still being kept. */
const PENDING_WAIT_MS = 5_000;

/** Sessions the user disposed that stay open until the run ends (see Session), at most this many. */
export const MAX_RETIRED_SESSIONS = 3;

/** The limits and browser of the run in progress, as the runner declares them. */
export interface RunLimits {
  /** The worker's browser; connected on first use, so runs that never start a session never connect. */
  getBrowser: () => Promise<Browser>;
  /**
   * The same browser through Playwright (`Session.start({ driver: "playwright" })`, and scripts
   * that import playwright): connected on first use; absent where the runner has no Playwright.
   */
  getPlaywright?: () => Promise<PlaywrightBrowser>;
  /** A Playwright connection of its own to the same browser (each `chromium.launch()` of a script run as it is). */
  newPlaywright?: () => Promise<PlaywrightBrowser>;
  /** Epoch ms at which the run times out; no session outlives it. */
  deadline: number;
  /** Where `artifacts.save` keeps files; absent where a run cannot keep any. */
  artifacts?: ArtifactSink;
  /** Where the browser puts downloads, which the run keeps as artifacts (see Session). */
  downloadsDir?: string;
  /** The function's secrets by name (`secrets.get`). */
  secrets?: Readonly<Record<string, string>>;
  /**
   * The runner's hook for each page the run opens, whichever driver opens it (recordings, the
   * live view: lambdas/recording/pageTarget.ts); awaited before the page is handed to the user.
   */
  pageOpened?: PageOpened;
  /**
   * The runner's hook before the run closes a context mid-run (a session's `close()`, a
   * launched browser's): what the open pages' recorders hold is taken first, since a closed
   * context's documents go without a word (their pages' recordings would end empty).
   */
  beforeContextClose?: () => Promise<void>;
  /** The function's proxy, its password read from its secrets by the service (absent: none). */
  proxy?: RunProxy;
  /** Where profiles are opened and saved (absent: a run that names one fails with a clear error). */
  profiles?: ProfileChannel;
  /**
   * Whoever runs this runner disposes every context the run leaves open once the run has
   * answered (the local worker: its sandbox's host resets or replaces the browser after each
   * answer, resetKeptBrowser). The run's end then reads what its sessions' profiles hold, but
   * closes none of their contexts itself: that would only hold the answer back, and a close
   * still under way as the host resets would cost the browser its reuse.
   */
  contextsDisposedAfterRun?: boolean;
}

/** True once the run has ended where its runner's host disposes the contexts it left (see RunLimits.contextsDisposedAfterRun). */
export function contextsLeftToHost(run: RunState): boolean {
  return run.ended && run.contextsDisposedAfterRun === true;
}

/** The run in progress: its limits, the sessions it holds open, the browser time it used. */
export interface RunState extends RunLimits {
  sessions: Set<OpenSession>;
  /**
   * Sessions disposed by `await using` (closed to the user), kept open until the run ends: a
   * run that fails inside `await using` has disposed its session before the error reaches the
   * runner, whose evidence (a screenshot, the HTML) needs the pages. The oldest is closed when
   * more than MAX_RETIRED_SESSIONS wait.
   */
  retired: OpenSession[];
  browserMs: number;
  ended: boolean;
  /** Artifacts kept so far, by name, with their bytes (the caps are checked before each save). */
  artifactSizes: Map<string, number>;
  /** Downloads being kept as artifacts: the run's end waits for them (a little). */
  pending: Set<Promise<unknown>>;
}

// A worker runs one invocation at a time, and user code reaches its run through the static
// `Session.start`, so the run in progress is held here, set and cleared by the runner only.
let current: RunState | undefined;

/** Declares the start of a run (runner only). Throws when another run is in progress. */
export function beginRun(limits: RunLimits): void {
  if (current) throw new Error("A run is already in progress in this worker");
  current = { ...limits, sessions: new Set(), retired: [], browserMs: 0, ended: false, artifactSizes: new Map(), pending: new Set() };
}

/** The run in progress, or undefined between runs (for events that may come at any time). */
export function runInProgress(): RunState | undefined {
  return current;
}

/** The run in progress, for the runtime SDK; a clear error outside a run (`what` names the call). */
export function currentRun(what = "Session.start()"): RunState {
  if (!current) {
    throw new Error(`${what} can only be called while browserfn runs your function (inside its default export)`);
  }
  return current;
}

/**
 * Ends the run in progress (runner only): closes every session it left open and returns the
 * browser-session time it used, the sum over its sessions of open → close milliseconds.
 */
export async function endRun(): Promise<{ browser_ms: number }> {
  const run = current;
  if (!run) return { browser_ms: 0 };
  run.ended = true;
  try {
    // Downloads that finished are kept before the pages go (bounded: a stuck save is left).
    if (run.pending.size > 0) await Promise.race([Promise.allSettled([...run.pending]), new Promise((resolve) => setTimeout(resolve, PENDING_WAIT_MS))]);
    await Promise.all([...run.sessions, ...run.retired].map((session) => session.close()));
  } finally {
    current = undefined;
  }
  return { browser_ms: run.browserMs };
}

/** The pages of the run in progress, open or in a disposed session still kept (runner only). */
export async function pagesOfRun(): Promise<EvidencePage[]> {
  const run = current;
  if (!run) return [];
  const lists = await Promise.all([...run.sessions, ...run.retired].map((session) => session.pages().catch(() => [] as EvidencePage[])));
  return lists.flat();
}

/**
 * Before `run` closes a context mid-run: its beforeContextClose hook (the recorders' takes), never
 * failing; nothing once the run has ended (the runner took what it keeps).
 */
export function beforeContextClose(run: RunState): Promise<void> {
  return run.ended ? Promise.resolve() : (run.beforeContextClose?.() ?? Promise.resolve()).catch(() => undefined);
}
