import { build, type Plugin } from "esbuild";

export interface RunnerBundle {
  /** The entry module (workerMain.ts, lambdaHandler.ts). */
  entry: string;
  outfile: string;
  /** Left out of the bundle, besides ws's optional native speed-ups. */
  external?: string[];
  /** Modules replaced by a stub. */
  stubs?: Plugin;
}

/**
 * Bundles a runner entry with the runner, the runtime SDK and puppeteer-core into one
 * CommonJS file for Node 20+ (the local worker and the Lambda runtime layer both use it).
 */
export async function bundleRunner({ entry, outfile, external = [], stubs }: RunnerBundle): Promise<string> {
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
    plugins: stubs ? [stubs] : [],
    logLevel: "silent",
    legalComments: "none",
  });
  return outfile;
}

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
