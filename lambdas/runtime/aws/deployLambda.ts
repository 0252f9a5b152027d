import {
  CreateAliasCommand,
  CreateFunctionCommand,
  type FunctionConfiguration,
  GetFunctionConfigurationCommand,
  PublishVersionCommand,
  type Runtime as LambdaRuntimeName,
  UpdateAliasCommand,
  UpdateFunctionCodeCommand,
  UpdateFunctionConfigurationCommand,
} from "@aws-sdk/client-lambda";
import type { FunctionItem, VersionWithCode } from "../../functions/types";
import type { DeployGuard, DeployResult } from "../runtime";
import { isAwsError, type LambdaSend } from "./lambdaClient";
import { functionZip } from "./functionZip";

/** What every function's Lambda gets, whatever the function. */
export interface LambdaSetup {
  runtime: LambdaRuntimeName;
  role: string;
  layers: string[];
  /** The CloudWatch log group every function's Lambda writes to (the stack's, with its retention). */
  logGroup: string;
  architecture: "x86_64";
  pollIntervalMs: number;
  activeTimeoutMs: number;
  sleep: (ms: number) => Promise<void>;
}

type Ready = { ready: true; config: FunctionConfiguration } | { ready: false; reason: string };

const HANDLER = "index.handler";

/**
 * The /tmp of every function's Lambda, in MB (Lambda's default is 512). @sparticuz/chromium
 * unpacks itself there once per container (≈ 200 MB for the browser, plus its libraries), and
 * the browser's profile (its disk cache) and whatever a run downloads or writes before upload
 * go there too, piling up for as long as the container serves runs. 512 MB would leave ≈ 300 MB
 * for all of that; 2048 leaves ≈ 1.8 GB. Lambda bills /tmp above 512 MB at about 1/540 of the
 * memory price per GB-second: the extra 1.5 GB adds ≈ 0.3% to a 1024 MB function's cost.
 */
export const EPHEMERAL_STORAGE_MB = 2048;

/**
 * How much longer than the function's timeout its Lambda may run: the runner stops the run at
 * the function's timeout and answers with its logs (lambdaHandler.ts), which needs Lambda to
 * leave it time for that (the runner keeps DEADLINE_MARGIN_MS, 3 s, before Lambda's end).
 */
export const LAMBDA_TIMEOUT_MARGIN_SECONDS = 5;

/** The Timeout of a function's Lambda: the function's own plus the margin, within Lambda's 900 s. */
export function lambdaTimeoutSeconds(timeoutSeconds: number): number {
  return Math.min(900, timeoutSeconds + LAMBDA_TIMEOUT_MARGIN_SECONDS);
}

const ACTIVE: DeployResult = { status: "active", status_reason: null };

/** The alias of a browserfn version: invocations of version N use qualifier `vN`. */
export const versionAlias = (version: number): string => `v${version}`;
/** The alias of the function's latest version and settings. */
export const LIVE_ALIAS = "live";

/** `send`, asking `guard` before each command that changes the function (every one but GetFunctionConfiguration). */
export function guardedSend(send: LambdaSend, guard: DeployGuard): LambdaSend {
  return async <Output>(command: Parameters<LambdaSend>[0]): Promise<Output> => {
    if (!(command instanceof GetFunctionConfigurationCommand)) await guard();
    return send<Output>(command);
  };
}

/**
 * Provisioning of one function's Lambda: create or update it, wait until Lambda has applied
 * the change, publish a Lambda version and point aliases at it. See createAwsRuntime.
 */
export function lambdaDeployer(send: LambdaSend, setup: LambdaSetup) {
  const settings = (name: string, fn: FunctionItem) => ({
    FunctionName: name,
    Runtime: setup.runtime,
    Role: setup.role,
    Handler: HANDLER,
    MemorySize: fn.memory_mb,
    Timeout: lambdaTimeoutSeconds(fn.timeout_seconds),
    EphemeralStorage: { Size: EPHEMERAL_STORAGE_MB },
    Layers: setup.layers,
    // Deliberately empty: the function's code runs user automations and gets no service secrets.
    Environment: { Variables: {} },
    // One log group for all of them, created by the stack with a retention (Lambda's default,
    // /aws/lambda/<name>, would be created on first use and kept forever). Its streams are
    // named <date>/<function name>[<version>][<instance>].
    LoggingConfig: { LogGroup: setup.logGroup, LogFormat: "Text" as const },
  });

  const settingsDiffer = (config: FunctionConfiguration, fn: FunctionItem): boolean =>
    config.MemorySize !== fn.memory_mb ||
    config.Timeout !== lambdaTimeoutSeconds(fn.timeout_seconds) ||
    config.EphemeralStorage?.Size !== EPHEMERAL_STORAGE_MB ||
    config.Runtime !== setup.runtime ||
    config.Role !== setup.role ||
    config.Handler !== HANDLER ||
    (config.Layers ?? []).map((layer) => layer.Arn).join() !== setup.layers.join() ||
    config.LoggingConfig?.LogGroup !== setup.logGroup;

  /** Polls until the function is Active and its last update Successful (or Failed, or too long). */
  const waitUntilReady = async (name: string): Promise<Ready> => {
    for (let waited = 0; ; waited += setup.pollIntervalMs) {
      const config = await send<FunctionConfiguration>(new GetFunctionConfigurationCommand({ FunctionName: name }));
      if (config.State === "Failed") {
        return { ready: false, reason: `Lambda reports the function Failed: ${config.StateReasonCode ?? ""} ${config.StateReason ?? ""}`.trim() };
      }
      if (config.LastUpdateStatus === "Failed") {
        const why = `${config.LastUpdateStatusReasonCode ?? ""} ${config.LastUpdateStatusReason ?? ""}`.trim();
        return { ready: false, reason: `Lambda reports the function's last update Failed: ${why}` };
      }
      // A new function has no LastUpdateStatus until its first update.
      if (config.State === "Active" && (config.LastUpdateStatus ?? "Successful") === "Successful") return { ready: true, config };
      if (waited >= setup.activeTimeoutMs) {
        const state = `State ${config.State ?? "unknown"}, LastUpdateStatus ${config.LastUpdateStatus ?? "unknown"}`;
        return { ready: false, reason: `Timed out after ${setup.activeTimeoutMs / 1000} s waiting for Lambda to make the function Active (${state})` };
      }
      await setup.sleep(setup.pollIntervalMs);
    }
  };

  /** Sends an update; when another update is still in progress (409), waits for it and tries once more. */
  const update = async (name: string, command: UpdateFunctionCodeCommand | UpdateFunctionConfigurationCommand): Promise<Ready> => {
    try {
      await send(command);
    } catch (error) {
      if (!isAwsError(error, "ResourceConflictException")) throw error;
      const before = await waitUntilReady(name);
      if (!before.ready) return before;
      await send(command);
    }
    return waitUntilReady(name);
  };

  /** Points `alias` at `version`: creates it, or moves it when it exists (`exists` says which to try first). */
  const pointAlias = async (name: string, alias: string, version: string, exists: boolean): Promise<void> => {
    const input = { FunctionName: name, Name: alias, FunctionVersion: version };
    const [first, fallback, expected] = exists
      ? [() => new UpdateAliasCommand(input), () => new CreateAliasCommand(input), "ResourceNotFoundException"]
      : [() => new CreateAliasCommand(input), () => new UpdateAliasCommand(input), "ResourceConflictException"];
    try {
      await send(first());
    } catch (error) {
      if (!isAwsError(error, expected)) throw error;
      await send(fallback());
    }
  };

  /**
   * Publishes $LATEST (only if its code is still `codeSha256`, when given: a concurrent deploy
   * cannot slip its code under this version's alias) and points `vN` and `live` at it.
   */
  const publish = async (name: string, version: number, aliases: { versionExists: boolean; liveExists: boolean }, codeSha256?: string): Promise<DeployResult> => {
    const published = await send<FunctionConfiguration>(
      new PublishVersionCommand({ FunctionName: name, CodeSha256: codeSha256, Description: `browserfn version ${version}` }),
    );
    const lambdaVersion = published.Version ?? "";
    await pointAlias(name, versionAlias(version), lambdaVersion, aliases.versionExists);
    await pointAlias(name, LIVE_ALIAS, lambdaVersion, aliases.liveExists);
    return ACTIVE;
  };

  const failed = (ready: { reason: string }): DeployResult => ({ status: "failed", status_reason: ready.reason });

  return {
    /**
     * Version 1 creates the function; later versions update its code. Either falls back to the
     * other: a create meets the function when a deploy is retried, an update misses it when the
     * create of version 1 failed.
     */
    async deploy(name: string, fn: FunctionItem, version: VersionWithCode): Promise<DeployResult> {
      const { zip, sha256 } = functionZip(version);
      const create = async (): Promise<boolean> => {
        const tags = { "browserfn:function_id": fn.function_id, "browserfn:account_id": fn.account_id };
        const input = { ...settings(name, fn), Code: { ZipFile: zip }, Architectures: [setup.architecture], Publish: false, Tags: tags };
        try {
          await send(new CreateFunctionCommand(input));
          return true;
        } catch (error) {
          if (!isAwsError(error, "ResourceConflictException")) throw error;
          return false; // it exists
        }
      };
      const updateCode = () =>
        update(name, new UpdateFunctionCodeCommand({ FunctionName: name, ZipFile: zip, Architectures: [setup.architecture], Publish: false }));

      let created = version.version === 1 && (await create());
      let ready: Ready;
      try {
        ready = created ? await waitUntilReady(name) : await updateCode();
      } catch (error) {
        if (created || !isAwsError(error, "ResourceNotFoundException")) throw error;
        created = await create();
        ready = created ? await waitUntilReady(name) : await updateCode();
      }
      if (!ready.ready) return failed(ready);
      if (settingsDiffer(ready.config, fn)) {
        ready = await update(name, new UpdateFunctionConfigurationCommand(settings(name, fn)));
        if (!ready.ready) return failed(ready);
      }
      return publish(name, version.version, { versionExists: false, liveExists: !created }, sha256);
    },

    /**
     * Applies the function's settings and publishes them as its latest version (see
     * Runtime.configure). The publish is guarded by the code behind alias `vN`: if a deploy of a
     * newer version changed the code meanwhile, Lambda refuses it (and that deploy publishes the
     * new code with these settings), rather than `vN` pointing at the newer code.
     */
    async configure(name: string, fn: FunctionItem): Promise<DeployResult> {
      const deployed = await send<FunctionConfiguration>(new GetFunctionConfigurationCommand({ FunctionName: name, Qualifier: versionAlias(fn.latest_version) }));
      const ready = await update(name, new UpdateFunctionConfigurationCommand(settings(name, fn)));
      if (!ready.ready) return failed(ready);
      return publish(name, fn.latest_version, { versionExists: true, liveExists: true }, deployed.CodeSha256);
    },
  };
}
