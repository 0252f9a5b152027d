import { jsonTextDeeperThan } from "../runner/jsonDepth";
import { MAX_JSON_DEPTH, resultTooDeep } from "../runner/outputLimits";
import { copyRun } from "./copyRun";
import type { RunItem } from "./types";

/**
 * A run whose result can be read back safely. Since MAX_JSON_DEPTH, no result nested deeper is
 * ever recorded (parseRunOutcome fails the run with `result_too_deep`); a record written
 * before it (kept across restarts) is shown as the cap would have ended it: `failed`,
 * `result_too_deep`, no result. Anything that parses or writes out a stored result (GET
 * /runs/{id}, its events, webhook bodies, invocation replays, MCP) reads it through this, so
 * none of them recurses past the cap. The depth is counted by a linear scan of the text.
 */
export function runWithinDepth(run: RunItem): RunItem {
  // No result (null; absent on a record of the run that is not final yet): nothing to read back.
  if (typeof run.result_json !== "string" || !jsonTextDeeperThan(run.result_json, MAX_JSON_DEPTH)) return run;
  const { code, message } = resultTooDeep();
  return {
    ...copyRun(run),
    status: "failed",
    result_json: null,
    error: { code, message: `${message} (recorded before results were capped at ${MAX_JSON_DEPTH} levels; the result is not shown)` },
  };
}
