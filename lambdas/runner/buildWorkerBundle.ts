import { join } from "node:path";
import { bundleRunner, stubModules } from "./bundleRunner";
import { playwrightBundling } from "./drivers/playwrightBundling";

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

/**
 * Bundles the worker entry (workerMain.ts), the runner, the runtime SDK and puppeteer-core
 * into one CommonJS file, `<outDir>/worker.cjs`, and returns its path. One file, so that the
 * worker can run under `--allow-fs-read=<that file>` and nothing else.
 */
export function buildWorkerBundle(outDir: string): Promise<string> {
  return bundleRunner({ entry: join(__dirname, "workerMain.ts"), outfile: join(outDir, "worker.cjs"), stubs: stubLaunchers, plugins: [playwrightBundling()] });
}

/**
 * Bundles a sandbox's host (hostMain.ts: starts the worker and its browser, speaks frames to
 * the service) into `<outDir>/host.cjs` and returns its path.
 */
export function buildHostBundle(outDir: string): Promise<string> {
  return bundleRunner({ entry: join(__dirname, "hostMain.ts"), outfile: join(outDir, "host.cjs") });
}
