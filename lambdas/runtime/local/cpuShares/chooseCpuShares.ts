import { CgroupCpuShares } from "./cgroupCpuShares";
import type { CpuShares, CpuSharesKind } from "./cpuShares";
import { NiceCpuShares } from "./niceCpuShares";

/** What this machine allows: a cpu cgroup per account (root, cgroup v1's cpu controller), else nice levels. */
export async function cpuSharesKind(): Promise<CpuSharesKind> {
  return (await CgroupCpuShares.available()) ? "cgroup" : "nice";
}

/** The service's CPU shares of the kind chosen at start-up (its parent group made, stale groups removed). */
export async function createCpuShares(kind: CpuSharesKind): Promise<CpuShares> {
  if (kind === "nice") return new NiceCpuShares();
  await CgroupCpuShares.prepare();
  return new CgroupCpuShares();
}

/** What to do for cgroups, for the start-up line where the machine gives only nice levels. */
export const CPU_SHARES_HOWTO =
  "run the service as root on a machine with cgroup v1's cpu controller mounted at /sys/fs/cgroup/cpu (cgroup v2 is not supported yet)";
