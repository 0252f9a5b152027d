import type { FunctionItem } from "../functions/types";
import { proxyOf } from "../proxy/proxySettings";
import { type RunProxy, runProxyOf } from "../proxy/runProxy";
import type { Profiles } from "./profileBlobs";
import { profilesOf } from "./profileSettings";
import { type RunProfiles, runProfiles } from "./runProfiles";

/** How long after its timeout a run's lease lapses by itself (a crashed service or worker). */
const LEASE_GRACE_MS = 60_000;

/**
 * What the trusted side gives one run of `fn` about browser state and network: its profiles
 * (the names its version's code gives literally, `literalNames`, and its `profiles` setting;
 * absent where the service keeps none) and its proxy, the password read from its secrets.
 */
export function runBrowserState(
  profiles: Profiles | undefined,
  fn: FunctionItem,
  run: { runId: string; timeoutMs: number; literalNames: readonly string[]; secrets: Readonly<Record<string, string>> },
): { profiles?: RunProfiles; proxy?: RunProxy } {
  const proxy = runProxyOf(proxyOf(fn), run.secrets);
  const opened = profiles
    ? runProfiles(profiles, {
        account_id: fn.account_id,
        function_name: fn.name,
        run_id: run.runId,
        allowed: new Set([...run.literalNames, ...profilesOf(fn)]),
        leaseUntilMs: Date.now() + run.timeoutMs + LEASE_GRACE_MS,
        now: () => Date.now(),
      })
    : undefined;
  return { ...(opened ? { profiles: opened } : {}), ...(proxy ? { proxy } : {}) };
}
