import { GetAccountSettingsCommand } from "@aws-sdk/client-lambda";
import { z } from "zod";
import type { Clock, FunctionLimits } from "../../deps";
import { ApiError } from "../../http/errors";
import type { LambdaClientLike } from "./lambdaClient";

/**
 * New AWS accounts start with reduced Lambda quotas: a concurrency limit below the standard
 * 1000 and a memory ceiling of 3008 MB. GetAccountSettings reports the first, not the second:
 * an account whose concurrency limit is below RESTRICTED_CONCURRENCY is taken to have the
 * reduced memory ceiling too.
 */
export const RESTRICTED_CONCURRENCY = 1000;
export const RESTRICTED_MAX_MEMORY_MB = 3008;
/** How long a container keeps the account's settings. */
export const ACCOUNT_SETTINGS_CACHE_MS = 10 * 60_000;
/** After a failed GetAccountSettings, how long deploys go unchecked before it is asked again. */
const FAILED_READ_CACHE_MS = 60_000;
/**
 * How long a request waits for GetAccountSettings (the SDK's retries of a throttled call can
 * take 15 s); past it the request goes on unchecked and the answer, when it comes, is kept.
 */
export const ACCOUNT_SETTINGS_WAIT_MS = 3000;

export interface AccountQuotaOptions {
  /** The control-plane client (standard retries); its owner destroys it. */
  client: LambdaClientLike<GetAccountSettingsCommand>;
  /** A ceiling the operator knows (BROWSERFN_MAX_FUNCTION_MEMORY_MB): Lambda is not asked. */
  maxMemoryMb: number | null;
  clock: Clock;
  log: (line: string) => void;
  /** Default ACCOUNT_SETTINGS_WAIT_MS. */
  waitMs?: number;
}

/** The account's memory ceiling and why; null when unknown (nothing is refused then). */
type Ceiling = { memoryMb: number; why: string } | null;

const AccountSettings = z.object({
  AccountLimit: z.object({ ConcurrentExecutions: z.number().optional() }).optional(),
});

/**
 * The pre-flight check of a function's settings against this AWS account's Lambda quotas
 * (Deps.checkFunctionSettings): throws 400 `invalid_request` for a memory_mb above the
 * account's ceiling, naming it. The ceiling is the operator's setting when given, otherwise
 * read with GetAccountSettings and kept for ACCOUNT_SETTINGS_CACHE_MS; a failed read is logged
 * and refuses nothing (a deploy must not hang on it).
 */
export function createAccountQuotaCheck(options: AccountQuotaOptions): (settings: FunctionLimits) => Promise<void> {
  const { client, clock, log } = options;

  const read = async (): Promise<{ ceiling: Ceiling; keepMs: number }> => {
    try {
      const answer = AccountSettings.parse(await client.send(new GetAccountSettingsCommand({})));
      const concurrency = answer.AccountLimit?.ConcurrentExecutions;
      if (concurrency === undefined || concurrency >= RESTRICTED_CONCURRENCY) return { ceiling: null, keepMs: ACCOUNT_SETTINGS_CACHE_MS };
      const why =
        `inferred from the account's quotas: Lambda reports no memory ceiling, but its concurrency quota is ${concurrency}, under ${RESTRICTED_CONCURRENCY}, ` +
        `and AWS gives new accounts reduced quotas, which cap memory at ${RESTRICTED_MAX_MEMORY_MB} MB; ` +
        `an operator who knows the account's real ceiling sets it with the stack setting functionMaxMemoryMb (cdk deploy -c functionMaxMemoryMb=<MB>), which replaces this inference`;
      return { ceiling: { memoryMb: RESTRICTED_MAX_MEMORY_MB, why }, keepMs: ACCOUNT_SETTINGS_CACHE_MS };
    } catch (error) {
      log(`GetAccountSettings failed; function memory goes unchecked for now: ${(error as Error).stack ?? error}`);
      return { ceiling: null, keepMs: FAILED_READ_CACHE_MS };
    }
  };

  // One read at a time, shared by every check while it is under way, then kept until `until`.
  let cached: { ceiling: Promise<Ceiling>; until: number } | undefined;
  const ceiling = (): Promise<Ceiling> => {
    if (options.maxMemoryMb !== null) return Promise.resolve({ memoryMb: options.maxMemoryMb, why: "as its operator has set it" });
    if (!cached || clock.now().getTime() >= cached.until) {
      const entry: { ceiling: Promise<Ceiling>; until: number } = {
        until: Number.POSITIVE_INFINITY,
        ceiling: read().then(({ ceiling, keepMs }) => {
          entry.until = clock.now().getTime() + keepMs;
          return ceiling;
        }),
      };
      cached = entry;
    }
    return cached.ceiling;
  };

  const waitMs = options.waitMs ?? ACCOUNT_SETTINGS_WAIT_MS;
  const ceilingWithin = async (): Promise<Ceiling> => {
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<Ceiling>((resolve) => {
      timer = setTimeout(() => {
        log(`GetAccountSettings did not answer within ${waitMs} ms; this request goes unchecked`);
        resolve(null);
      }, waitMs);
    });
    try {
      return await Promise.race([ceiling(), late]);
    } finally {
      clearTimeout(timer);
    }
  };

  return async ({ memory_mb }) => {
    const limit = await ceilingWithin();
    if (!limit || memory_mb <= limit.memoryMb) return;
    throw new ApiError(
      "invalid_request",
      `memory_mb ${memory_mb} exceeds the ${limit.memoryMb} MB this service's AWS account can give a function (${limit.why}); ` +
        `choose ${limit.memoryMb} or less, or ask the operator to have AWS raise the account's Lambda quotas (Service Quotas or AWS Support)`,
      { field: "memory_mb", limit: limit.memoryMb },
    );
  };
}
