import { join } from "node:path";
import { playwrightBundling } from "./drivers/playwrightBundling";
import { bundleRunner, stubModules } from "./bundleRunner";

/**
 * WebDriver BiDi: the runner speaks CDP only, so it is replaced by a module that explains
 * itself if used. Unlike the worker bundle, @puppeteer/browsers stays: the Lambda runner
 * launches its own Chromium with `puppeteer.launch`, which needs it.
 */
const STUBBED = /^chromium-bidi(\/.*)?$/;

const STUB_SOURCE = `
module.exports = new Proxy({}, {
  get(target, key) {
    if (typeof key === "symbol" || key === "__esModule" || key === "then") return undefined;
    throw new Error("WebDriver BiDi is not available in browserfn: puppeteer-core speaks CDP here");
  },
});
`;

const stubBidi = stubModules("stub-bidi", STUBBED, STUB_SOURCE);

/**
 * Bundles the Lambda runner (lambdaHandler.ts with the runner, the runtime SDK and
 * puppeteer-core) into one CommonJS file in the runtime layer's layout,
 * `<outDir>/nodejs/browserfn-runner.cjs` (= RUNNER_LAYER_PATH once Lambda unpacks the layer
 * under /opt), and returns its path. @sparticuz/chromium stays external: it comes from the
 * chromium layer, with its compressed binaries beside it. Kept apart from lambdaHandler.ts so
 * that the bundle does not contain esbuild.
 */
export function buildLambdaRunnerBundle(outDir: string): Promise<string> {
  return bundleRunner({
    entry: join(__dirname, "lambdaHandler.ts"),
    outfile: join(outDir, "nodejs", "browserfn-runner.cjs"),
    external: ["@sparticuz/chromium"],
    stubs: stubBidi,
    plugins: [playwrightBundling()],
  });
}
