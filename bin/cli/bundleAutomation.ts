import { readFile } from "node:fs/promises";
import { isBuiltin } from "node:module";
import path from "node:path";
import { type Metafile, build } from "esbuild";
import { CliError } from "./args";
import { bundleFailure } from "./bundleErrors";
import { decodeMappings, type PositionMap, type Segment, withInlineMap } from "../../lambdas/code/sourceMaps";
import { namespaceImports } from "./namespaceImports";
import { typedDefaultExport } from "./typedDefaultExport";

/**
 * Imports the runtime provides to every automation (with Node's built-ins): they stay imports.
 * The browser libraries are browserfn's own in the runner (scripts as they are: their
 * `launch()` gives the run's warm browser), so a script's copy is never bundled.
 */
const PROVIDED = /^(browserfn\/runtime|puppeteer-core|puppeteer|playwright-core|playwright)(\/.*)?$/;
const BROWSER_LIBRARIES = ["puppeteer-core", "puppeteer", "playwright-core", "playwright"];
/** Kept out of the bundle: what the runtime provides, and ws's optional native speed-ups (loaded in a try/catch). */
const EXTERNAL = ["browserfn/runtime", ...BROWSER_LIBRARIES.flatMap((name) => [name, `${name}/*`]), "bufferutil", "utf-8-validate"];

export interface BundledAutomation {
  /** The module to deploy. */
  code: string;
  /** Bytes of the entry's own code (with esbuild's helpers and the typed default export), and of everything it imports. */
  entryBytes: number;
  dependencyBytes: number;
  /** What the bundled imports weigh, by npm package or local file (`./helpers/x.ts`), largest first; empty when the file is sent as written. */
  parts: { name: string; bytes: number }[];
  /**
   * `code` with an inline source map on its last line back to the user's own files (not npm
   * packages'), which the service composes into its own so that stack frames name them
   * (`thrower.ts:8:11`); absent when the file is sent as written (its lines are the user's).
   */
  withSourceMap?: string;
}

/** A character a map's source name may not hold (the service refuses the map): replaced by `_`. */
const UNSAFE_SOURCE_CHARACTER = /[^\w./@+-]/g;

/** Offsets of the starts of `text`'s lines. */
function lineStarts(text: string): number[] {
  const starts = [0];
  for (let i = text.indexOf("\n"); i !== -1; i = text.indexOf("\n", i + 1)) starts.push(i + 1);
  return starts;
}

/**
 * esbuild's map of the bundle `js`, carried over to `code` (what typedDefaultExport made of it:
 * `offset` says where each character went), with the segments of the user's own files only:
 * an npm package's frames keep their place in the bundle, and the map stays small (a few
 * bytes per token of the user's code). Undefined when no segment is left.
 */
function ownSourcesMap(json: string, js: string, code: string, offset: (at: number) => number | undefined): PositionMap | undefined {
  const esbuildMap = JSON.parse(json) as { sources: string[]; mappings: string };
  const sources: string[] = [];
  const index = new Map<number, number>();
  esbuildMap.sources.forEach((source, i) => {
    if (!source.split("/").includes("node_modules")) index.set(i, sources.push(source.replace(UNSAFE_SOURCE_CHARACTER, "_").slice(0, 200)) - 1);
  });
  const from = lineStarts(js);
  const to = lineStarts(code);
  const lines: Segment[][] = to.map(() => []);
  let kept = 0;
  decodeMappings(esbuildMap.mappings, esbuildMap.sources.length).forEach((segments, line) => {
    for (const segment of segments) {
      const source = index.get(segment.source);
      const at = source === undefined ? undefined : offset((from[line] ?? Infinity) + segment.column);
      if (source === undefined || at === undefined) continue;
      // The line of `code` that holds `at`: the last start at or before it.
      let low = 0;
      let high = to.length - 1;
      while (low < high) {
        const mid = (low + high + 1) >> 1;
        if ((to[mid] ?? 0) <= at) low = mid;
        else high = mid - 1;
      }
      lines[low]?.push({ column: at - (to[low] ?? 0), source, line: segment.line, sourceColumn: segment.sourceColumn });
      kept++;
    }
  });
  return kept > 0 ? { sources, lines: lines.map((segments) => segments.sort((a, b) => a.column - b.column)) } : undefined;
}

function isProvided(specifier: string): boolean {
  return PROVIDED.test(specifier) || isBuiltin(specifier);
}

/** An input of the metafile (relative to the entry's directory) as the user knows it: its npm package, or the local file. */
function partName(input: string): string {
  const at = input.lastIndexOf("node_modules/");
  if (at < 0) return input.startsWith("../") ? input : `./${input}`;
  const [first = "", second = ""] = input.slice(at + "node_modules/".length).split("/");
  return first.startsWith("@") ? `${first}/${second}` : first;
}

/** Bytes in the output of every input but the entry, summed by partName, largest first. */
function partsOf(metafile: Metafile, entry: string): { name: string; bytes: number }[] {
  const output = Object.entries(metafile.outputs).find(([file]) => file.endsWith(".js"))?.[1];
  const sums = new Map<string, number>();
  for (const [input, { bytesInOutput }] of Object.entries(output?.inputs ?? {})) {
    if (input === entry) continue;
    const name = partName(input);
    sums.set(name, (sums.get(name) ?? 0) + bytesInOutput);
  }
  return [...sums].map(([name, bytes]) => ({ name, bytes })).sort((a, b) => b.bytes - a.bytes || a.name.localeCompare(b.name));
}

/**
 * Turns an automation file into the one module the service accepts: what `esbuild --bundle
 * --minify --format=esm --platform=node` makes of it (tree-shaken: only what the file uses of
 * its imports), with `browserfn/runtime`, `puppeteer-core` and Node's built-ins left as imports
 * (the runtime provides them), and a typed default export that keeps the parameters the service
 * reads (see typedDefaultExport). `await using` is left to the service's compiler, as in a file
 * sent as written. A file that imports nothing to bundle is sent as written (its shebang line
 * blanked), so the service's errors name its own lines.
 */
export async function bundleAutomation(file: string): Promise<BundledAutomation> {
  const absolute = path.resolve(file);
  const name = path.basename(absolute);
  let source: string;
  try {
    source = await readFile(absolute, "utf8");
  } catch (error) {
    throw new CliError(`Cannot read ${file}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`, 2);
  }
  // A shebang line is blanked (line numbers stay): the runner evaluates the module as a function body, where `#!` is a syntax error.
  if (source.startsWith("#!")) source = source.replace(/^#![^\n]*/, "");
  const workingDir = path.dirname(absolute);
  let result;
  try {
    result = await build({
      entryPoints: [absolute],
      absWorkingDir: workingDir,
      bundle: true,
      write: false,
      metafile: true,
      format: "esm",
      platform: "node",
      target: "node20",
      supported: { using: true },
      minify: true,
      legalComments: "none",
      // A map back to the user's files (positions only), for the stacks of errors: see entrySourceMap.
      sourcemap: "external",
      sourcesContent: false,
      outfile: path.join(workingDir, "bundle.js"), // names the map's sources relative to the entry's directory; nothing is written

      external: EXTERNAL,
      plugins: [namespaceImports(isProvided)],
      logLevel: "silent",
    });
  } catch (error) {
    throw bundleFailure(error, name, workingDir);
  }
  // Nothing but the entry went in: its imports are all provided (or types only).
  if (Object.keys(result.metafile.inputs).length <= 1) return { code: source, entryBytes: Buffer.byteLength(source), dependencyBytes: 0, parts: [] };
  const parts = partsOf(result.metafile, path.relative(workingDir, absolute).split(path.sep).join("/"));
  const js = result.outputFiles.find((file) => file.path.endsWith(".js"))?.text ?? "";
  const moved: { offset?: (at: number) => number | undefined } = {};
  const code = typedDefaultExport(js, source, name, moved);
  const dependencyBytes = parts.reduce((sum, part) => sum + part.bytes, 0);
  const mapFile = result.outputFiles.find((file) => file.path.endsWith(".map"));
  const map = mapFile && moved.offset ? ownSourcesMap(mapFile.text, js, code, moved.offset) : undefined;
  return { code, entryBytes: Buffer.byteLength(code) - dependencyBytes, dependencyBytes, parts, ...(map ? { withSourceMap: withInlineMap(code, map) } : {}) };
}
