import { existsSync, readFileSync } from "node:fs";
import { cp, mkdir, mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { buildLambdaRunnerBundle } from "../lambdas/runner/lambdaRunnerBundle";

/** Directories laid out as Lambda layers (`nodejs/…` is on the Node.js module path under /opt). */
export interface LayerAssetDirs {
  /** `nodejs/node_modules/@sparticuz/chromium` and the packages it needs. */
  chromium: string;
  /** `nodejs/browserfn-runner.cjs`: the runner the per-function Lambdas run. */
  runtime: string;
}

export const CHROMIUM_PACKAGE = "@sparticuz/chromium";

/**
 * Builds both layer directories in a temporary directory, offline and in seconds: copies
 * @sparticuz/chromium and its dependencies out of node_modules, and bundles the runner with
 * esbuild. CDK copies them into cdk.out when the layers are created; call `cleanup` after synth.
 */
export async function prepareLayerAssets(projectRoot: string): Promise<LayerAssetDirs & { cleanup(): Promise<void> }> {
  const root = await mkdtemp(path.join(tmpdir(), "browserfn-layers-"));
  const cleanup = () => rm(root, { recursive: true, force: true });
  try {
    const chromium = path.join(root, "chromium");
    const runtime = path.join(root, "runtime");
    await copyPackageClosure(projectRoot, CHROMIUM_PACKAGE, path.join(chromium, "nodejs", "node_modules"));
    await mkdir(runtime, { recursive: true });
    await buildLambdaRunnerBundle(runtime);
    return { chromium, runtime, cleanup };
  } catch (error) {
    await cleanup();
    throw error;
  }
}

/**
 * Copies a package and everything it depends on (its `dependencies`, transitively, resolved
 * the way Node resolves them) to `destination`, keeping node_modules nesting. Optional
 * dependencies are left out: @sparticuz/chromium's are the `bare-*` ports for the Bare
 * runtime, which Node never loads.
 */
export async function copyPackageClosure(projectRoot: string, name: string, destination: string): Promise<string[]> {
  const nodeModules = path.join(projectRoot, "node_modules");
  const found = new Set<string>();
  const visit = (packageName: string, fromDir: string) => {
    const dir = resolvePackageDir(packageName, fromDir, projectRoot);
    if (found.has(dir)) return;
    found.add(dir);
    const manifest = JSON.parse(readFileSync(path.join(dir, "package.json"), "utf8")) as { dependencies?: Record<string, string> };
    for (const dependency of Object.keys(manifest.dependencies ?? {})) visit(dependency, dir);
  };
  visit(name, projectRoot);
  const copied = [...found].map((dir) => path.relative(nodeModules, dir));
  for (const relative of copied) {
    await cp(path.join(nodeModules, relative), path.join(destination, relative), {
      recursive: true,
      // Nested node_modules are copied as packages of their own, only when depended on.
      filter: (source) => !path.relative(path.join(nodeModules, relative), source).split(path.sep).includes("node_modules"),
    });
  }
  return copied;
}

/** Node's lookup: `<dir>/node_modules/<name>`, walking up from `fromDir` to the project root. */
function resolvePackageDir(name: string, fromDir: string, projectRoot: string): string {
  for (let dir = fromDir; ; dir = path.dirname(dir)) {
    const candidate = path.join(dir, "node_modules", name);
    if (existsSync(path.join(candidate, "package.json"))) return candidate;
    if (dir === projectRoot || path.dirname(dir) === dir) break;
  }
  throw new Error(`Cannot find package '${name}' (needed by the chromium layer) under ${projectRoot}/node_modules; run npm install`);
}
