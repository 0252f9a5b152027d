import { dirname, join } from "node:path";
import type { Plugin } from "esbuild";
import { bundleRunner, stubModules } from "./bundleRunner";
import { playwrightBundling } from "./drivers/playwrightBundling";
import { DeferredModules } from "./deferredModule";

/**
 * Packages puppeteer-core needs only to launch or download browsers, or to speak WebDriver
 * BiDi. A worker only connects to the Chromium its supervisor launched, over CDP, so these
 * are replaced by a module that explains itself when used. This cuts the bundle from ~4.6 MB
 * (proxy agents, a PAC interpreter, yargs, zip/tar readers, the BiDi mapper) to ~1.8 MB.
 */
const STUBBED = /^(@puppeteer\/browsers|chromium-bidi)(\/.*)?$/;

const STUB_SOURCE = `
const message = "This part of puppeteer-core (launching or downloading browsers, WebDriver BiDi) " +
  "is not available in a browserfn worker: use Session.start() from browserfn/runtime";
module.exports = new Proxy({}, {
  get(target, key) {
    if (typeof key === "symbol" || key === "__esModule" || key === "then") return undefined;
    throw new Error(message);
  },
});
`;

const stubLaunchers = stubModules("stub-launchers", STUBBED, STUB_SOURCE);

/** playwright-core's own bundle beside the worker's: loaded only by a run that uses Playwright. */
const PLAYWRIGHT_FILE = "playwright-core.cjs";

/** The path of playwright-core's bundle beside a worker bundle (the host lets the worker read both, the sandbox mounts both). */
export function playwrightBundleOf(workerBundle: string): string {
  return join(dirname(workerBundle), PLAYWRIGHT_FILE);
}

/** Resolves the worker's `require("playwright-core")` to the bundle beside it, at run time. */
const playwrightBeside: Plugin = {
  name: "playwright-beside",
  setup(builder) {
    builder.onResolve({ filter: /^playwright-core$/ }, () => ({ path: `./${PLAYWRIGHT_FILE}`, external: true }));
  },
};

/**
 * Bundles the worker entry (workerMain.ts), the runner, the runtime SDK and puppeteer-core
 * into one CommonJS file, `<outDir>/worker.cjs`, and returns its path; playwright-core goes into
 * `<outDir>/playwright-core.cjs` beside it (≈ 7 MB that only Playwright code loads, see
 * loadPlaywright). The worker runs under `--allow-fs-read` of these two files and nothing else.
 */
export async function buildWorkerBundle(outDir: string): Promise<string> {
  // puppeteer-core is kept as text, compiled at its first use (see DeferredModules).
  const deferred = new DeferredModules([stubLaunchers]);
  const [worker] = await Promise.all([
    bundleRunner({ entry: join(__dirname, "workerMain.ts"), outfile: join(outDir, "worker.cjs"), stubs: stubLaunchers, plugins: [playwrightBeside, deferred.plugin(["puppeteer-core"])] }).then(async (written) => {
      await deferred.splice(written);
      return written;
    }),
    bundleRunner({ entry: require.resolve("playwright-core"), outfile: join(outDir, PLAYWRIGHT_FILE), plugins: [playwrightBundling()] }),
  ]);
  return worker;
}

/**
 * Bundles a sandbox's host (hostMain.ts: starts the worker and its browser, speaks frames to
 * the service) into `<outDir>/host.cjs` and returns its path.
 */
export function buildHostBundle(outDir: string): Promise<string> {
  return bundleRunner({ entry: join(__dirname, "hostMain.ts"), outfile: join(outDir, "host.cjs") });
}
