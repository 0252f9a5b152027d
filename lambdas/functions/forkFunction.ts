import type { Deps } from "../deps";
import { ApiError } from "../http/errors";
import type { Principal } from "../identity/identity";
import { copyWarnings } from "./copyWarnings";
import { insertFunction, newVersion } from "./createFunction";
import { newFunctionId, newDeployId } from "./ids";
import { fitPlanCaps } from "./planCaps";
import { resolveFunction } from "./resolveFunction";
import { DEFAULT_SETTINGS, applySettings } from "./settings";
import type { FunctionItem } from "./types";

const MAX_SUFFIX = 100;

/**
 * Copies the latest version of a function (the caller's own, or a shared one) into the
 * caller's account as version 1: no schedule, not shared, `reference_workflow_id` set.
 * The name is kept, or suffixed `-fork`, `-fork-2`, … when taken (unless one is asked for).
 */
export async function forkFunction(
  deps: Deps,
  principal: Principal,
  functionId: string,
  requestedName?: string,
): Promise<FunctionItem> {
  deps.deployLimiter?.take(principal.account_id);
  const source = await resolveFunction(deps.store, principal, functionId, true);
  const code = await deps.store.versions.get(source.function_id, source.latest_version);
  if (!code) throw new ApiError("function_not_found", `No function named '${functionId}'`, { ref: functionId });
  const now = deps.clock.now();
  const settings = applySettings(
    DEFAULT_SETTINGS,
    {
      description: source.description,
      ...fitPlanCaps(deps.config.plans, principal.plan, source.timeout_seconds, source.memory_mb),
    },
    principal,
    deps.config,
    now,
  );
  await deps.checkFunctionSettings?.({ memory_mb: settings.memory_mb, timeout_seconds: settings.timeout_seconds });
  // Versions stored before warnings were kept have none: their source is checked again.
  const warnings = code.warnings ?? (await deps.codeAnalysis.warnings(code.source, principal.account_id));
  const version = newVersion(newFunctionId(), 1, { ...code, warnings }, code.source, now);
  const fn: FunctionItem = {
    ...settings,
    account_id: principal.account_id,
    function_id: version.function_id,
    name: requestedName ?? source.name,
    status: "deploying",
    status_reason: null,
    deploy_id: newDeployId(),
    latest_version: 1,
    variables: code.variables,
    ...(code.input_schema ? { input_schema: code.input_schema } : {}),
    ...(code.output_schema ? { output_schema: code.output_schema } : {}),
    warnings: copyWarnings(warnings),
    reference_workflow_id: source.function_id,
    created_at: now.toISOString(),
    updated_at: now.toISOString(),
    code_sha256: code.code_sha256,
    revision: 1,
  };
  return insertFunction(deps, fn, version, requestedName ? [requestedName] : forkNames(source.name));
}

/** `name`, `name-fork`, `name-fork-2`, … each cut to fit the 63-character limit. */
export function forkNames(name: string): string[] {
  const names = [name];
  for (let n = 1; n <= MAX_SUFFIX; n++) {
    const suffix = n === 1 ? "-fork" : `-fork-${n}`;
    names.push(name.slice(0, 63 - suffix.length).replace(/-+$/, "") + suffix);
  }
  return names;
}
