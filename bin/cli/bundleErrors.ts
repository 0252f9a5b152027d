import { existsSync } from "node:fs";
import path from "node:path";
import type { Message } from "esbuild";
import { CliError } from "./args";

/** `zod` of `zod/mini`, `@scope/name` of `@scope/name/sub`. */
function packageName(specifier: string): string {
  const parts = specifier.split("/");
  return (specifier.startsWith("@") ? parts.slice(0, 2) : parts.slice(0, 1)).join("/");
}

/** True when `node_modules/<name>` exists in `dir` or a directory above it (where Node and esbuild look). */
function isInstalled(name: string, dir: string): boolean {
  for (let at = dir; ; at = path.dirname(at)) {
    if (existsSync(path.join(at, "node_modules", name, "package.json"))) return true;
    if (path.dirname(at) === at) return false;
  }
}

/** A file as the user knows it: relative to the entry's directory, or from `node_modules/` on for a package's own file. */
function shownPath(file: string): string {
  const at = file.lastIndexOf("node_modules/");
  return at >= 0 ? file.slice(at) : file;
}

/**
 * One line per esbuild error. An import of a package that is not installed reads
 * `Cannot find package 'x' imported by file.ts: run npm install x`, naming the file that imports it.
 */
function describe(message: Message, workingDir: string): string {
  const location = message.location;
  const missing = /^Could not resolve "([^"]+)"/.exec(message.text)?.[1];
  if (missing !== undefined && location && !/^[./]/.test(missing) && !path.isAbsolute(missing)) {
    const name = packageName(missing);
    if (!isInstalled(name, path.dirname(path.resolve(workingDir, location.file)))) {
      return `Cannot find package '${name}' imported by ${shownPath(location.file)}: run npm install ${name}`;
    }
  }
  const where = location ? `${shownPath(location.file)}:${location.line}:${location.column + 1}: ` : "";
  const note = message.notes[0]?.text;
  return `${where}${message.text}${note && !note.startsWith("You can mark the path") ? ` (${note})` : ""}`;
}

/** The CliError (exit 2) for a failed esbuild build, or for whatever else it threw. */
export function bundleFailure(error: unknown, entryName: string, workingDir: string): CliError {
  const errors = (error as { errors?: Message[] }).errors;
  if (!errors || errors.length === 0) return new CliError(`Bundling ${entryName} failed: ${(error as Error).message}`, 2);
  const lines = errors.slice(0, 5).map((message) => describe(message, workingDir));
  if (errors.length > 5) lines.push(`… and ${errors.length - 5} more`);
  return new CliError(lines.length === 1 ? (lines[0] ?? "") : `Bundling ${entryName} failed:\n  ${lines.join("\n  ")}`, 2);
}
