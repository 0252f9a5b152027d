import path from "node:path";
import ts from "typescript";

const ROOT = path.resolve(__dirname, "../..");

/**
 * Type-checks `files` with the project's compiler options (tsconfig.json) and returns every
 * diagnostic as text (empty when they type-check). Modules resolve from the files' own
 * directory, so a directory outside the project needs a `node_modules` link to the project's.
 */
export function typecheck(files: string[]): string[] {
  const config = ts.readConfigFile(path.join(ROOT, "tsconfig.json"), (file) => ts.sys.readFile(file));
  if (config.error) throw new Error(ts.flattenDiagnosticMessageText(config.error.messageText, "\n"));
  const { options } = ts.parseJsonConfigFileContent(config.config, ts.sys, ROOT);
  const program = ts.createProgram(files, { ...options, noEmit: true });
  return ts.getPreEmitDiagnostics(program).map((diagnostic) => {
    const message = ts.flattenDiagnosticMessageText(diagnostic.messageText, "\n");
    if (!diagnostic.file || diagnostic.start === undefined) return message;
    const { line, character } = diagnostic.file.getLineAndCharacterOfPosition(diagnostic.start);
    return `${diagnostic.file.fileName}:${line + 1}:${character + 1}: ${message}`;
  });
}
