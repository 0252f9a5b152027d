import { copyWarnings } from "./copyWarnings";
import type { Deps } from "../deps";
import { ApiError } from "../http/errors";
import type { Principal } from "../identity/identity";
import { checkSchedulable } from "../schedule/checkSchedulable";
import { newDeployId, newFunctionId } from "./ids";
import { DEFAULT_SETTINGS, type SettingsPatch, applySettings } from "./settings";
import { startDeploy } from "./startDeploy";
import type { FunctionItem, VersionWithCode } from "./types";

export interface NewFunction extends SettingsPatch {
  name: string;
  code: string;
}

/**
 * Creates a function: compiles and validates everything first (the platform's limits too),
 * writes version 1, then the record (the commit point: a conditional write that makes the name
 * unique per account), then deploys (see insertFunction). A create that fails leaves nothing
 * behind.
 */
export async function createFunction(deps: Deps, principal: Principal, input: NewFunction): Promise<FunctionItem> {
  deps.deployLimiter?.take(principal.account_id);
  const compiled = await deps.codeAnalysis.compile(input.code, principal.account_id);
  const now = deps.clock.now();
  const settings = applySettings(DEFAULT_SETTINGS, input, principal, deps.config, now);
  checkSchedulable(deps.scheduler, settings, compiled.variables, compiled.input_schema);
  await deps.checkFunctionSettings?.({ memory_mb: settings.memory_mb, timeout_seconds: settings.timeout_seconds });
  const version = newVersion(newFunctionId(), 1, compiled, input.code, now);
  const fn: FunctionItem = {
    account_id: principal.account_id,
    function_id: version.function_id,
    name: input.name,
    ...settings,
    status: "deploying",
    status_reason: null,
    deploy_id: newDeployId(),
    latest_version: 1,
    variables: compiled.variables,
    input_schema: compiled.input_schema,
    output_schema: compiled.output_schema,
    warnings: compiled.warnings,
    reference_workflow_id: null,
    created_at: now.toISOString(),
    updated_at: now.toISOString(),
    code_sha256: compiled.code_sha256,
    revision: 1,
  };
  if (await deps.store.functions.getByName(fn.account_id, fn.name)) throw functionExists(fn.name);
  return insertFunction(deps, fn, version, [fn.name]);
}

/**
 * Writes a new function's first version and then its record (`deploying`) under the first free
 * name among `names`, starts its deploy (a deploy job on AWS, answered at once; inline locally)
 * and keeps its schedule; removes the version again when every name is taken. The schedule is
 * kept here, not after the deploy: it reads only the record's schedule, a deploy's outcome does
 * not change it, and its failure reaches the caller instead of a job's log.
 */
export async function insertFunction(
  deps: Deps,
  fn: FunctionItem,
  version: VersionWithCode,
  names: string[],
): Promise<FunctionItem> {
  await deps.store.versions.create(version);
  for (const name of names) {
    const candidate = { ...fn, name };
    if (await deps.store.functions.create(candidate)) {
      const deployed = await startDeploy(deps, candidate, "deploy", version);
      await deps.scheduler.sync(deployed);
      return deployed;
    }
  }
  await deps.store.versions.deleteAll(fn.function_id);
  throw functionExists(names[0] ?? fn.name);
}

export function newVersion(
  functionId: string,
  number: number,
  compiled: Pick<VersionWithCode, "js" | "variables" | "code_sha256" | "parameter_style" | "input_schema" | "output_schema" | "warnings" | "profile_names" | "profile_writes">,
  source: string,
  now: Date,
): VersionWithCode {
  return {
    function_id: functionId,
    version: number,
    created_at: now.toISOString(),
    code_sha256: compiled.code_sha256,
    variables: compiled.variables,
    parameter_style: compiled.parameter_style,
    ...(compiled.input_schema ? { input_schema: compiled.input_schema } : {}),
    ...(compiled.output_schema ? { output_schema: compiled.output_schema } : {}),
    ...(compiled.warnings ? { warnings: copyWarnings(compiled.warnings) } : {}),
    ...(compiled.profile_names ? { profile_names: [...compiled.profile_names] } : {}),
    ...(compiled.profile_writes ? { profile_writes: [...compiled.profile_writes] } : {}),
    source,
    js: compiled.js,
  };
}

function functionExists(name: string): ApiError {
  return new ApiError("function_exists", `A function named '${name}' exists already`, { name });
}
