import { readFile, writeFile } from "node:fs/promises";
import { build, type Plugin } from "esbuild";

/**
 * Modules of a runner bundle kept as source text and compiled only when first required: the
 * worker's puppeteer-core (1.8 MB, ~3/4 of worker.cjs). V8 pre-parses every function of a file
 * it loads, so each fresh worker process (one per run) paid for parsing puppeteer-core even when
 * its run never touched the browser (docs/benchmarks.md, "Round 4, session 12").
 *
 * The text goes in a comment of a function and is read back with Function.prototype.toString:
 * V8 skips a comment at a fraction of what a string literal of the same size costs it to scan
 * (≈ 6 against ≈ 25 ms for puppeteer-core). esbuild drops comments, so the bundle is built with
 * a placeholder (`plugin`) and the text spliced in after it is written (`splice`). The module
 * runs as it would in the bundle: the same CommonJS code, with the bundle's `require` (Node's
 * built-ins) in reach; a run's own code can alter builtins of its process before it, as it can
 * alter the module itself after: one process serves one run (workerMain).
 */
export class DeferredModules {
  private readonly sources = new Map<string, string>();

  constructor(private readonly stubs: Plugin[] = []) {}

  /** The esbuild plugin: `require(name)` of each of `names` gets the deferred module. */
  plugin(names: readonly string[]): Plugin {
    const filter = new RegExp(`^(${names.map(escapeRegExp).join("|")})$`);
    return {
      name: "deferred-modules",
      setup: (builder) => {
        builder.onResolve({ filter }, (args) => (args.namespace === "deferred" ? undefined : { path: args.path, namespace: "deferred" }));
        builder.onLoad({ filter: /.*/, namespace: "deferred" }, async (args) => {
          this.sources.set(args.path, await this.buildSource(args.path));
          return { contents: loaderSource(args.path), loader: "js" };
        });
      },
    };
  }

  /** Puts each deferred module's text in the written bundle, in place of its placeholder. */
  async splice(bundlePath: string): Promise<void> {
    let text = await readFile(bundlePath, "utf8");
    for (const [name, source] of this.sources) {
      const placeholder = `return ${JSON.stringify(placeholderOf(name))};`;
      const at = text.indexOf(placeholder);
      if (at === -1 || text.indexOf(placeholder, at + 1) !== -1) throw new Error(`the bundle ${bundlePath} does not hold ${name}'s placeholder once`);
      text = text.slice(0, at) + keptText(source) + text.slice(at + placeholder.length);
    }
    await writeFile(bundlePath, text);
  }

  private async buildSource(name: string): Promise<string> {
    const { outputFiles } = await build({
      entryPoints: [require.resolve(name)],
      bundle: true,
      write: false,
      platform: "node",
      format: "cjs",
      target: "node20",
      minify: false,
      sourcemap: false,
      // As bundleRunner's: ws loads these native speed-ups in a try/catch.
      external: ["bufferutil", "utf-8-validate"],
      plugins: this.stubs,
      logLevel: "silent",
      legalComments: "none",
    });
    const source = outputFiles[0]?.text;
    if (source === undefined) throw new Error(`esbuild built nothing for ${name}`);
    return source;
  }
}

/** What stands for the two characters that end a comment inside the kept text. */
const END_MARK = "*\u0001/";

function placeholderOf(name: string): string {
  return `browserfn-deferred-module:${name}`;
}

/** The kept text, as it replaces `return "<placeholder>";` in the function `kept`. */
export function keptText(source: string): string {
  // A text holding the marker itself is kept as a string literal: slower to load, as correct.
  if (source.includes("\u0001")) return `return ${JSON.stringify(source)};`;
  return `/*${source.replaceAll("*/", END_MARK)}*/`;
}

/** The deferred module: compiles the kept text (kept comment or string) on first require. */
function loaderSource(name: string): string {
  const filename = JSON.stringify(`${name}.cjs`);
  return [
    `function kept() { return ${JSON.stringify(placeholderOf(name))}; }`,
    "function keptSource() {",
    "  const returned = kept();",
    `  if (returned === ${JSON.stringify(placeholderOf(name))}) throw new Error("This bundle was written without ${name}'s text (DeferredModules.splice)");`,
    "  if (typeof returned === \"string\") return returned;",
    "  const whole = Function.prototype.toString.call(kept);",
    `  return whole.slice(whole.indexOf("/*") + 2, whole.lastIndexOf("*/")).replaceAll(${JSON.stringify(END_MARK)}, "*/");`,
    "}",
    `const wrapper = require("node:vm").compileFunction(keptSource(), ["exports", "require", "module", "__filename", "__dirname"], { filename: ${filename} });`,
    "const inner = { exports: {} };",
    `wrapper.call(inner.exports, inner.exports, require, inner, ${filename}, ".");`,
    "module.exports = inner.exports;",
  ].join("\n");
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\/-]/g, "\\$&");
}
