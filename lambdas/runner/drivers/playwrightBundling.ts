import { readFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import type { Plugin } from "esbuild";

/**
 * playwright-core reads two JSON files of its package by a path computed at run time
 * (`require(path.join(packageRoot, "package.json"))`, and `browsers.json`), which a bundle
 * cannot follow and a worker may not read (it reads its bundle only). This esbuild plugin puts
 * both files' content in their place, so that the bundled playwright-core loads from the bundle
 * alone. It fails the build if either spot is no longer there (a playwright-core upgrade).
 */
export function playwrightBundling(): Plugin {
  return {
    name: "playwright-core-json",
    setup(builder) {
      builder.onLoad({ filter: /playwright-core[\\/]lib[\\/]coreBundle\.js$/ }, async (args) => {
        const root = join(dirname(args.path), "..");
        const [source, packageJson, browsersJson] = await Promise.all([
          readFile(args.path, "utf8"),
          readFile(join(root, "package.json"), "utf8"),
          readFile(join(root, "browsers.json"), "utf8"),
        ]);
        let replaced = 0;
        const contents = source.replace(/require\((import_path\d*)\.default\.join\(packageRoot, "(package|browsers)\.json"\)\)/g, (_whole, _path, name: string) => {
          replaced += 1;
          return `(${name === "package" ? packageJson : browsersJson})`;
        });
        if (replaced !== 2) throw new Error(`playwright-core's coreBundle.js: expected its 2 reads of package.json and browsers.json, found ${replaced}`);
        return { contents, loader: "js" };
      });
    },
  };
}
