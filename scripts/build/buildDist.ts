/**
 * Builds dist/, what `npm start` and the `browserfn` command run: the service and the CLI as one
 * CommonJS bundle each (no TypeScript compiled at start-up), and the sandbox's runner bundles,
 * which a start copies into its runtime folder instead of building them. Run by `npm ci` and
 * `npm install` (the `prepare` script), and by bin/start.cjs and bin/cli.js when a source is
 * newer than the build (sourceStamp.cjs). Each file is written beside and renamed into place,
 * the stamp last: a process starting meanwhile loads a whole old file or a whole new one, and a
 * build cut short leaves dist/ stale, so the next start builds it again.
 */
import { mkdir, mkdtemp, rename, rm, writeFile } from "node:fs/promises";
import path from "node:path";
import { build, stop, type BuildOptions, type Plugin } from "esbuild";
import { buildHostBundle, buildWorkerBundle, playwrightBundleOf } from "../../lambdas/runner/buildWorkerBundle";
import { sourceDirnames } from "./sourceDirnames";
import { holdBuildLock } from "./buildLock";
// eslint-disable-next-line @typescript-eslint/no-require-imports -- plain JavaScript shared with the launchers
const { SOURCE_DIRS, STAMP_FILE, isDistFresh, sourceStamp } = require("./sourceStamp.cjs") as typeof import("./sourceStamp.cjs");

const ROOT = path.resolve(__dirname, "..", "..");
const DIST = path.join(ROOT, "dist");

/** Where the runner bundles go in dist/ (see prebuiltRunnerBundles). */
export const RUNNER_DIR = "runner";

/**
 * Packages left out of the service and CLI bundles, loaded from node_modules when used:
 * esbuild (its binary is found from its package), TypeScript (8 MB, loaded only by a deploy's
 * analysis thread or the CLI's `deploy`), the MCP SDK and ajv (the first MCP request or invocation
 * loads them: startupModules.test), @sparticuz/chromium and dynalite (they find files of their
 * package), the browser drivers and tsx (its hook is registered by the analysis threads).
 */
const EXTERNAL = [
  "esbuild",
  "typescript",
  "@modelcontextprotocol/sdk",
  "ajv",
  "@sparticuz/chromium",
  "dynalite",
  "puppeteer-core",
  "playwright-core",
  "tsx",
];

/** `browserfn start` loads the service's bundle beside the CLI's, instead of carrying it. */
const serviceBeside: Plugin = {
  name: "service-beside",
  setup(builder) {
    builder.onResolve({ filter: /^\.\/local$/ }, (args) =>
      args.importer === path.join(ROOT, "bin", "cli.ts") ? { path: "./local.cjs", external: true } : undefined,
    );
  },
};

function bundle(entry: string, outfile: string, plugins: Plugin[] = []): BuildOptions {
  return {
    entryPoints: [path.join(ROOT, entry)],
    outfile,
    bundle: true,
    platform: "node",
    format: "cjs",
    target: "node20",
    external: EXTERNAL,
    plugins: [...plugins, sourceDirnames(ROOT, DIST, SOURCE_DIRS)],
    // Names as in the sources: code reads them (the local store client names a DynamoDB operation by its command's class).
    keepNames: true,
    logLevel: "warning",
    legalComments: "none",
  };
}

async function buildInto(staging: string): Promise<void> {
  await mkdir(path.join(staging, RUNNER_DIR));
  // The bundles' own paths are dist/…: their `__dirname` is computed for there.
  const local = bundle("bin/local.ts", path.join(staging, "local.cjs"));
  const cli = bundle("bin/cli.ts", path.join(staging, "cli.cjs"), [serviceBeside]);
  // The runner's builds stop esbuild's service when they end (bundleRunner): they go first.
  await Promise.all([buildWorkerBundle(path.join(staging, RUNNER_DIR)), buildHostBundle(path.join(staging, RUNNER_DIR))]);
  await Promise.all([build(local), build(cli)]);
}

/** Builds dist/ unless it is fresh; `force` builds it anyway. */
export async function buildDist(force = false): Promise<void> {
  await mkdir(DIST, { recursive: true });
  await using _lock = await holdBuildLock(DIST);
  // Another build may have finished while this one waited for the lock.
  if (!force && isDistFresh(ROOT)) return;
  // Taken before the build reads anything: an edit made during the build leaves dist/ stale.
  const stamp = sourceStamp(ROOT);
  const staging = await mkdtemp(path.join(DIST, ".staging-"));
  try {
    await rm(path.join(DIST, STAMP_FILE), { force: true });
    await buildInto(staging);
    await mkdir(path.join(DIST, RUNNER_DIR), { recursive: true });
    const worker = path.join(RUNNER_DIR, "worker.cjs");
    for (const file of ["local.cjs", "cli.cjs", worker, path.relative(staging, playwrightBundleOf(path.join(staging, worker))), path.join(RUNNER_DIR, "host.cjs")]) {
      await rename(path.join(staging, file), path.join(DIST, file));
    }
    const fresh = path.join(staging, STAMP_FILE);
    await writeFile(fresh, `${JSON.stringify(stamp)}\n`);
    await rename(fresh, path.join(DIST, STAMP_FILE));
  } finally {
    await rm(staging, { recursive: true, force: true });
    await stop();
  }
}

if (require.main === module) {
  const started = Date.now();
  buildDist(process.argv.includes("--force")).then(
    () => process.stderr.write(`browserfn: dist/ is up to date (${Date.now() - started} ms)\n`),
    (error: unknown) => {
      process.stderr.write(`browserfn: building dist/ failed: ${(error as Error).message}\n`);
      process.exitCode = 1;
    },
  );
}
