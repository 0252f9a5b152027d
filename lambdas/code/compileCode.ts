import { createHash } from "node:crypto";
import ts from "typescript";
import { extractParameters, type ParameterInfo } from "./extractParameters";

export interface CompiledCode {
  /** The module as JavaScript: still an ES module with `export default`. */
  js: string;
  /** The default export's call parameters. */
  variables: ParameterInfo[];
  /** Hex SHA-256 of the source text as submitted (UTF-8). */
  code_sha256: string;
}

const COMPILER_OPTIONS: ts.CompilerOptions = {
  // ES2022, not ESNext: Node 20 cannot parse `using` / `await using`, and every target below
  // ESNext lowers them into inline __addDisposableResource/__disposeResources helpers.
  target: ts.ScriptTarget.ES2022,
  // ESNext keeps `import` / `export default` as ES module syntax (no CommonJS rewrite).
  module: ts.ModuleKind.ESNext,
  // Imports used only as types are dropped, as usual for TypeScript (side-effect imports stay).
  importHelpers: false,
  sourceMap: false,
};

/**
 * Validates a user's module (size, syntax, default export, parameters — see extractParameters;
 * every rejection is an ApiError("invalid_code")) and transpiles it once to JavaScript.
 */
export function compileCode(source: string): CompiledCode {
  const variables = extractParameters(source); // the size check runs first, before parsing
  const { outputText } = ts.transpileModule(source, { compilerOptions: COMPILER_OPTIONS, fileName: "index.ts" });
  const code_sha256 = createHash("sha256").update(source, "utf8").digest("hex");
  return { js: outputText, variables, code_sha256 };
}
