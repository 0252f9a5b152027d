import type { Deps } from "../deps";
import { ApiError } from "../http/errors";
import type { Principal } from "../identity/identity";
import type { RunItem } from "./types";

/** One of the principal's runs by id; 404 `run_not_found` for any other (another account's too). */
export async function ownRun(deps: Pick<Deps, "store">, principal: Principal, runId: string): Promise<RunItem> {
  const run = /^run_[0-9a-z]{26}$/.test(runId) ? await deps.store.runs.get(runId) : undefined;
  if (!run || run.account_id !== principal.account_id) {
    throw new ApiError("run_not_found", `No run '${runId.slice(0, 64)}'`, { run_id: runId.slice(0, 64) });
  }
  return run;
}

/** Where the API serves a run's artifact. */
export function artifactUrl(baseUrl: string, runId: string, name: string): string {
  return `${baseUrl.replace(/\/+$/, "")}/runs/${runId}/artifacts/${encodeURIComponent(name)}`;
}
