import { chmod } from "node:fs/promises";
import { playwrightBundleOf } from "../../../runner/buildWorkerBundle";
import { chromiumFiles } from "./chromium";
import { prepareRunnerBundles } from "./prebuiltRunner";
import type { RuntimeFiles } from "./sandboxedHost";
import { writeSandboxEtc } from "./sandboxEtc";

/**
 * Makes what every worker sandbox reads in `runtimeDir` (outside the data dir): the host and
 * worker bundles (copied from dist/ when it is fresh, see prebuiltRunner.ts), the sandbox's /etc files, and Chromium unpacked. All of it readable by every
 * user (workers run under uids of their own when the service runs as root), none writable.
 */
export async function prepareRuntimeFiles(runtimeDir: string, sharesHostNetwork: boolean): Promise<RuntimeFiles> {
  await chmod(runtimeDir, 0o755);
  const [{ workerBundle, hostBundle }, chromium, etcDir] = await Promise.all([
    prepareRunnerBundles(runtimeDir),
    chromiumFiles(),
    writeSandboxEtc(runtimeDir, sharesHostNetwork),
  ]);
  await chmod(workerBundle, 0o644);
  await chmod(playwrightBundleOf(workerBundle), 0o644);
  await chmod(hostBundle, 0o644);
  return { runtimeDir, workerBundle, hostBundle, etcDir, chromium };
}
