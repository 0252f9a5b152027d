import { constants } from "node:fs";
import { copyFile } from "node:fs/promises";
import path from "node:path";
import { buildHostBundle, buildWorkerBundle, playwrightBundleOf } from "../../../runner/buildWorkerBundle";
// eslint-disable-next-line @typescript-eslint/no-require-imports -- plain JavaScript shared with the launchers (bin/start.cjs, bin/cli.js)
const { isDistFresh } = require("../../../../scripts/build/sourceStamp.cjs") as typeof import("../../../../scripts/build/sourceStamp.cjs");

const PROJECT_ROOT = path.resolve(__dirname, "..", "..", "..", "..");
/** Where scripts/build/buildDist.ts puts the runner bundles. */
const PREBUILT_DIR = path.join(PROJECT_ROOT, "dist", "runner");

export interface RunnerBundles {
  workerBundle: string;
  hostBundle: string;
  /** Copied from dist/ (built by `npm ci`), or built now. */
  prebuilt: boolean;
}

/**
 * Puts the worker bundle (with playwright-core's beside it) and the host bundle in `outDir`:
 * copies of dist/runner's when dist/ was built from the sources as they are now (sourceStamp),
 * which takes milliseconds; otherwise built from the sources, which takes seconds (a source was
 * edited since the last build, or there is no dist/).
 */
export async function prepareRunnerBundles(outDir: string): Promise<RunnerBundles> {
  if (isDistFresh(PROJECT_ROOT)) {
    const workerBundle = path.join(outDir, "worker.cjs");
    const hostBundle = path.join(outDir, "host.cjs");
    const copies: [string, string][] = [
      [path.join(PREBUILT_DIR, "worker.cjs"), workerBundle],
      [playwrightBundleOf(path.join(PREBUILT_DIR, "worker.cjs")), playwrightBundleOf(workerBundle)],
      [path.join(PREBUILT_DIR, "host.cjs"), hostBundle],
    ];
    const copied = await Promise.all(copies.map(([from, to]) => copyFile(from, to, constants.COPYFILE_FICLONE).then(() => true, () => false)));
    if (copied.every(Boolean)) return { workerBundle, hostBundle, prebuilt: true };
  }
  const [workerBundle, hostBundle] = await Promise.all([buildWorkerBundle(outDir), buildHostBundle(outDir)]);
  return { workerBundle, hostBundle, prebuilt: false };
}
