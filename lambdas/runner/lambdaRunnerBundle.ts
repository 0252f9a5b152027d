import { join } from "node:path";
import { build } from "esbuild";
import { stubModules } from "./stubModules";

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
export async function buildLambdaRunnerBundle(outDir: string): Promise<string> {
  const outfile = join(outDir, "nodejs", "browserfn-runner.cjs");
  await build({
    entryPoints: [join(__dirname, "lambdaHandler.ts")],
    outfile,
    bundle: true,
    platform: "node",
    format: "cjs",
    // Runs on nodejs22.x; node20 keeps it loadable by the local Node 20 too.
    target: "node20",
    minify: false,
    sourcemap: false,
    // ws loads these native speed-ups in a try/catch and falls back to JavaScript without them.
    external: ["@sparticuz/chromium", "bufferutil", "utf-8-validate"],
    plugins: [stubBidi],
    logLevel: "silent",
    legalComments: "none",
  });
  return outfile;
}
