import type { Browser } from "puppeteer-core";

/**
 * The least `memory_mb` a run may start a browser session in, on both runtimes. Measured on
 * these machines (docs/limits.md, "Memory"): Node and @sparticuz/chromium with the Lambda
 * runner's flags, launched cold in a cgroup v1 memory group of that size (Chromium decompressed
 * into a fresh /tmp, as on a Lambda cold start, so its page cache is charged to the group), then
 * a context, a page, setContent, title and a screenshot. Below this the launch or the page is
 * killed out of memory often enough that a run cannot count on it; a function below it still
 * runs code that uses no browser.
 */
export const BROWSER_MIN_MEMORY_MB = 512;

/** The message of a browser session refused for `memoryMb`. */
export function insufficientMemoryMessage(memoryMb: number): string {
  return `A browser session needs memory_mb of at least ${BROWSER_MIN_MEMORY_MB}; this function has ${memoryMb} MB, in which Chromium is killed out of memory. Raise the function's memory_mb, or use no browser session in it`;
}

/** What a run's session start throws when its function's memory cannot hold a browser. */
export class InsufficientMemoryError extends Error {
  readonly code = "insufficient_memory";
  constructor(memoryMb: number) {
    super(insufficientMemoryMessage(memoryMb));
    this.name = "InsufficientMemoryError";
  }
}

/**
 * The run's browser getter for a function of `memoryMb` (undefined: not known, never refused):
 * below BROWSER_MIN_MEMORY_MB it rejects with InsufficientMemoryError and never launches, and
 * `refused()` says so afterwards: a run that then fails fails `insufficient_memory` (whatever
 * error its code threw instead); one whose code caught the error and returned succeeds.
 */
export function browserWithinMemory(memoryMb: number | undefined, getBrowser: () => Promise<Browser>): { getBrowser: () => Promise<Browser>; refused(): boolean } {
  let refused = false;
  if (memoryMb === undefined || memoryMb >= BROWSER_MIN_MEMORY_MB) return { getBrowser, refused: () => false };
  return {
    getBrowser: () => {
      refused = true;
      return Promise.reject(new InsufficientMemoryError(memoryMb));
    },
    refused: () => refused,
  };
}
