import { readFile } from "node:fs/promises";
import path from "node:path";
import type { Plugin } from "esbuild";

/** `__dirname` as an identifier (not inside a word, not the text of a string such as `"__dirname"`). */
const DIRNAME = /(?<![\w$."'`])__dirname(?![\w$"'`])/g;

/**
 * Gives each bundled module of the project the `__dirname` it has in the sources, so that what
 * sits beside a source file (the dashboard's files, dynaliteChild.cjs, the worker entries a
 * build starts from, package.json) is found from a bundle as it is under tsx: inside a bundle,
 * Node's `__dirname` is the bundle's folder for every module. Each use in a file of `sourceDirs`
 * becomes `require("node:path").join(__dirname, "<from the bundle's folder to the file's>")`.
 */
export function sourceDirnames(projectRoot: string, outDir: string, sourceDirs: readonly string[]): Plugin {
  const roots = sourceDirs.map((dir) => path.join(projectRoot, dir) + path.sep);
  return {
    name: "source-dirnames",
    setup(builder) {
      builder.onLoad({ filter: /\.[cm]?[jt]s$/ }, async (args) => {
        if (!roots.some((root) => args.path.startsWith(root))) return undefined;
        const source = await readFile(args.path, "utf8");
        if (!source.includes("__dirname")) return undefined;
        const relative = path.relative(outDir, path.dirname(args.path)).split(path.sep).join("/");
        const contents = source.replace(DIRNAME, `require("node:path").join(__dirname, ${JSON.stringify(relative)})`);
        return { contents, loader: args.path.endsWith(".ts") ? "ts" : "js" };
      });
    },
  };
}
