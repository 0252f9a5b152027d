import { build, stop, type Plugin } from "esbuild";
import { buildRecorderSource } from "../recording/recorderBuild";

export interface RunnerBundle {
  /** The entry module (workerMain.ts, lambdaHandler.ts). */
  entry: string;
  outfile: string;
  /** Left out of the bundle, besides ws's optional native speed-ups. */
  external?: string[];
  /** Modules replaced by a stub. */
  stubs?: Plugin;
  /** Further esbuild plugins. */
  plugins?: Plugin[];
}

/** bundleRunner calls under way in this process (esbuild's service is shared by all of them). */
let buildsUnderWay = 0;

/**
 * Bundles a runner entry with the runner, the runtime SDK and puppeteer-core into one
 * CommonJS file for Node 20+ (the local worker and the Lambda runtime layer both use it).
 * When the last build under way ends, esbuild's service process is stopped: it would
 * otherwise hold ≈ 55 MB for the rest of the local service's life, which builds its bundles
 * once, at start-up. A later build starts a new one.
 */
export async function bundleRunner(bundle: RunnerBundle): Promise<string> {
  buildsUnderWay += 1;
  try {
    return await buildRunner(bundle);
  } finally {
    buildsUnderWay -= 1;
    if (buildsUnderWay === 0) await stop();
  }
}

async function buildRunner({ entry, outfile, external = [], stubs, plugins = [] }: RunnerBundle): Promise<string> {
  await build({
    entryPoints: [entry],
    outfile,
    bundle: true,
    platform: "node",
    format: "cjs",
    // Lambda runs nodejs22.x; node20 keeps the bundle loadable by the local Node 20 too.
    target: "node20",
    minify: false,
    sourcemap: false,
    // ws loads these native speed-ups in a try/catch and falls back to JavaScript without them.
    external: [...external, "bufferutil", "utf-8-validate"],
    plugins: [...(stubs ? [stubs] : []), inlineRecorder, ...plugins],
    logLevel: "silent",
    legalComments: "none",
  });
  return outfile;
}

/**
 * The recorder's sources, built now and put in the bundle as strings (lambdas/recording/
 * recorderBuild.ts): a runner reads no file for it, and carries no esbuild.
 */
const inlineRecorder: Plugin = {
  name: "inline-recorder",
  setup(builder) {
    builder.onResolve({ filter: /[\\/]recorderBuild$/ }, (args) => ({ path: args.path, namespace: "inline-recorder" }));
    builder.onLoad({ filter: /.*/, namespace: "inline-recorder" }, () => {
      const source = buildRecorderSource();
      return { contents: `exports.buildRecorderSource = () => (${JSON.stringify(source)});`, loader: "js" };
    });
  },
};

/** An esbuild plugin that replaces the modules matching `filter` with `source` (a CommonJS module). */
export function stubModules(name: string, filter: RegExp, source: string): Plugin {
  return {
    name,
    setup(builder) {
      builder.onResolve({ filter }, (args) => ({ path: args.path, namespace: name }));
      builder.onLoad({ filter: /.*/, namespace: name }, () => ({ contents: source, loader: "js" }));
    },
  };
}
