import type { Browser } from "puppeteer-core";

/** What one open session gives its run when the run ends. */
export interface OpenSession {
  close(): Promise<void>;
}

/** The limits and browser of the run in progress, as the runner declares them. */
export interface RunLimits {
  /** The worker's browser; connected on first use, so runs that never start a session never connect. */
  getBrowser: () => Promise<Browser>;
  /** Epoch ms at which the run times out; no session outlives it. */
  deadline: number;
}

/** The run in progress: its limits, the sessions it holds open, the browser time it used. */
export interface RunState extends RunLimits {
  sessions: Set<OpenSession>;
  browserMs: number;
  ended: boolean;
}

// A worker runs one invocation at a time, and user code reaches its run through the static
// `Session.start`, so the run in progress is held here, set and cleared by the runner only.
let current: RunState | undefined;

/** Declares the start of a run (runner only). Throws when another run is in progress. */
export function beginRun(limits: RunLimits): void {
  if (current) throw new Error("A run is already in progress in this worker");
  current = { ...limits, sessions: new Set(), browserMs: 0, ended: false };
}

/** The run in progress, for the runtime SDK; a clear error outside a run. */
export function currentRun(): RunState {
  if (!current) {
    throw new Error("Session.start() can only be called while browserfn runs your function (inside its default export)");
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
    await Promise.all([...run.sessions].map((session) => session.close()));
  } finally {
    current = undefined;
  }
  return { browser_ms: run.browserMs };
}
