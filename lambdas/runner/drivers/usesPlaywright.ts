/** Code that imports playwright or asks `Session.start` for its driver (compiled CommonJS). */
const PLAYWRIGHT_IN_CODE = /require\(["']playwright(-core)?["']\)|driver\s*:\s*["']playwright["']/;

/**
 * Whether a function's code uses Playwright: its runner then loads playwright-core before any
 * run (the Lambda runner: before its realm snapshot, as playwright-core's loading changes
 * globals of its own; the local worker: warmed with the browser). Other code never loads it.
 */
export function usesPlaywright(code: string): boolean {
  return PLAYWRIGHT_IN_CODE.test(code);
}
