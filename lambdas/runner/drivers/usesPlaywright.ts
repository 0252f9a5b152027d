import { readFileSync } from "node:fs";
import path from "node:path";
import { loadPlaywright } from "../../../layers/runtime/drivers/loadPlaywright";

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

/** The Lambda runner's start: loads playwright-core when the function's code (`code.cjs` in `codeDir`) uses it. */
export function preloadPlaywrightFor(codeDir: string): void {
  let code = "";
  try {
    code = readFileSync(path.join(codeDir, "code.cjs"), "utf8");
  } catch {
    return; // the handler's own read reports it
  }
  if (usesPlaywright(code)) loadPlaywright();
}
