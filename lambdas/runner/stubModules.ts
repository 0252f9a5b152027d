import type { Plugin } from "esbuild";

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
