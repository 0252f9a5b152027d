import { chmod } from "node:fs/promises";
import { buildHostBundle, buildWorkerBundle, playwrightBundleOf } from "../../../runner/buildWorkerBundle";
import { chromiumFiles } from "./chromium";
import type { RuntimeFiles } from "./sandboxedHost";
import { writeSandboxEtc } from "./sandboxEtc";

/**
 * Makes what every worker sandbox reads in `runtimeDir` (outside the data dir): the host and
 * worker bundles, the sandbox's /etc files, and Chromium unpacked. All of it readable by every
 * user (workers run under uids of their own when the service runs as root), none writable.
 */
export async function prepareRuntimeFiles(runtimeDir: string, sharesHostNetwork: boolean): Promise<RuntimeFiles> {
  await chmod(runtimeDir, 0o755);
  const [workerBundle, hostBundle, chromium, etcDir] = await Promise.all([
    buildWorkerBundle(runtimeDir),
    buildHostBundle(runtimeDir),
    chromiumFiles(),
    writeSandboxEtc(runtimeDir, sharesHostNetwork),
  ]);
  await chmod(workerBundle, 0o644);
  await chmod(playwrightBundleOf(workerBundle), 0o644);
  await chmod(hostBundle, 0o644);
  return { runtimeDir, workerBundle, hostBundle, etcDir, chromium };
}
