import { readFile } from "node:fs/promises";
import { isBuiltin } from "node:module";
import path from "node:path";
import { type Metafile, build } from "esbuild";
import { CliError } from "./args";
import { bundleFailure } from "./bundleErrors";
import { namespaceImports } from "./namespaceImports";
import { typedDefaultExport } from "./typedDefaultExport";

/** Imports the runtime provides to every automation (with Node's built-ins): they stay imports. */
const PROVIDED = /^(browserfn\/runtime|puppeteer-core)(\/.*)?$/;
/** Kept out of the bundle: what the runtime provides, and ws's optional native speed-ups (loaded in a try/catch). */
const EXTERNAL = ["browserfn/runtime", "puppeteer-core", "puppeteer-core/*", "bufferutil", "utf-8-validate"];

export interface BundledAutomation {
  /** The module to deploy. */
  code: string;
  /** Bytes of the entry's own code (with esbuild's helpers and the typed default export), and of everything it imports. */
  entryBytes: number;
  dependencyBytes: number;
  /** What the bundled imports weigh, by npm package or local file (`./helpers/x.ts`), largest first; empty when the file is sent as written. */
  parts: { name: string; bytes: number }[];
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
  const output = Object.values(metafile.outputs)[0];
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
  const code = typedDefaultExport(result.outputFiles[0]?.text ?? "", source, name);
  const dependencyBytes = parts.reduce((sum, part) => sum + part.bytes, 0);
  return { code, entryBytes: Buffer.byteLength(code) - dependencyBytes, dependencyBytes, parts };
}
