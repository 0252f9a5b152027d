import { createHash } from "node:crypto";
import ts from "typescript";
import { extractSignature, type ParameterInfo, type ParameterStyle } from "./extractParameters";

export interface CompiledCode {
  /**
   * The module as CommonJS JavaScript (`exports.default = run`, imports as `require(...)`):
   * the runner evaluates it with its own `require`, with no files and no loader hooks.
   */
  js: string;
  /** The default export's call parameters. */
  variables: ParameterInfo[];
  /** How the runner passes `variables`: `fn(a, b)` ("positional") or `fn({ a, b })` ("object"). */
  parameter_style: ParameterStyle;
  /** Hex SHA-256 of the source text as submitted (UTF-8). */
  code_sha256: string;
}

const COMPILER_OPTIONS: ts.CompilerOptions = {
  // ES2022, not ESNext: Node 20 cannot parse `using` / `await using`, and every target below
  // ESNext lowers them into inline __addDisposableResource/__disposeResources helpers.
  target: ts.ScriptTarget.ES2022,
  // CommonJS: `import x from "m"` becomes `require("m")`, `export default` becomes `exports.default`.
  module: ts.ModuleKind.CommonJS,
  // `import puppeteer from "puppeteer-core"` gets the CommonJS module object as its default.
  esModuleInterop: true,
  // Helpers (__importDefault, __disposeResources, ...) are inlined: the runner offers no tslib.
  importHelpers: false,
  sourceMap: false,
};

/**
 * Validates a user's module (size, syntax, default export, parameters — see extractParameters;
 * every rejection is an ApiError("invalid_code")) and transpiles it once to CommonJS.
 */
export function compileCode(source: string): CompiledCode {
  const { variables, style } = extractSignature(source); // the size check runs first, before parsing
  const { outputText } = ts.transpileModule(source, { compilerOptions: COMPILER_OPTIONS, fileName: "index.ts" });
  const code_sha256 = createHash("sha256").update(source, "utf8").digest("hex");
  return { js: outputText, variables, parameter_style: style, code_sha256 };
}
