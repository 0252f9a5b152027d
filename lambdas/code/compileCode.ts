import { createHash } from "node:crypto";
import ts from "typescript";
import { deriveSchemas } from "./deriveSchemas";
import { checkCodeSize, parseModule, signatureOf, type ParameterInfo, type ParameterStyle } from "./extractParameters";
import type { InputSchema, JsonSchema } from "./jsonSchema";
import { findLaunchOptions } from "./findLaunchOptions";
import { findUnawaitedReturns } from "./findUnawaitedReturns";
import { readingCode } from "./readingCode";
import { MAX_WARNINGS, type Warning } from "./warnings";
import { composeMaps, type PositionMap, takeInlineMap, withInlineMap } from "./sourceMaps";
import { persistedProfileNamesInCode, profileNamesInCode } from "../profiles/profileNamesInCode";

export type { Warning } from "./warnings";

/** The name the user's source goes by in stack traces (`at run (automation.ts:12:11)`). */
export const SOURCE_NAME = "automation.ts";

export interface CompiledCode {
  /**
   * The module as CommonJS JavaScript (`exports.default = run`, imports as `require(...)`):
   * the runner evaluates it with its own `require`, with no files and no loader hooks. Its last
   * line is an inline source map (`//# sourceMappingURL=data:…`) back to SOURCE_NAME (and, for a
   * module that carried a source map of its own on its last line, as `browserfn deploy`'s bundles
   * do, on to the files that map names), with which the runner names the user's lines in the
   * stack of an error (see automationStack.ts).
   */
  js: string;
  /** The default export's call parameters (`schema_note` on those the schema describes only in part). */
  variables: ParameterInfo[];
  /** The call parameters' JSON Schema, derived from their TypeScript types (see deriveSchemas). */
  input_schema: InputSchema;
  /** The declared return type's JSON Schema; `{}` when there is none. */
  output_schema: JsonSchema;
  /** How the runner passes `variables`: `fn(a, b)` ("positional") or `fn({ a, b })` ("object"). */
  parameter_style: ParameterStyle;
  /** Hex SHA-256 of the source text as submitted (UTF-8). */
  code_sha256: string;
  /** What in the module deploys but probably fails at run time (see findUnawaitedReturns); [] when nothing. */
  warnings: Warning[];
  /** The profile names the module passes literally to Session.start (its runs may open them; see profileNamesInCode). */
  profile_names: string[];
  /** Of `profile_names`, those a call may open with `persist` (see persistedProfileNamesInCode). */
  profile_writes: string[];
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
  // Positions only (no `sourcesContent`): the runner maps stack frames, it never shows the source.
  inlineSourceMap: true,
};

/**
 * Validates a user's module (size, syntax, default export, parameters — see extractParameters;
 * every rejection is an ApiError("invalid_code"), code nested too deeply to read too: see
 * readingCode), transpiles it once to CommonJS with an inline source map, and lists its
 * warnings. CPU-bound and unbounded in time for hostile code: the service runs it in a worker
 * thread within a budget (see lambdas/code/analysis).
 */
export function compileCode(source: string): CompiledCode {
  checkCodeSize(source); // before parsing
  return readingCode(() => compileChecked(source));
}

function compileChecked(source: string): CompiledCode {
  const sf = parseModule(source);
  const signature = signatureOf(sf);
  const { variables, input_schema, output_schema } = deriveSchemas(sf, signature);
  // A bundle's own map (`browserfn deploy` adds one) is taken off and composed into the compiler's.
  const { code: module, map: bundleMap } = takeInlineMap(source);
  const { outputText } = ts.transpileModule(module, { compilerOptions: COMPILER_OPTIONS, fileName: SOURCE_NAME });
  const code_sha256 = createHash("sha256").update(source, "utf8").digest("hex");
  return {
    js: bundleMap ? composeInlineMap(outputText, bundleMap) : outputText,
    variables,
    input_schema,
    output_schema,
    parameter_style: signature.style,
    code_sha256,
    warnings: moduleWarnings(sf),
    profile_names: profileNamesInCode(sf),
    profile_writes: persistedProfileNamesInCode(sf),
  };
}

/**
 * The compiled module with its inline map (to SOURCE_NAME, the module as sent) composed with
 * the module's own (to the files it was bundled from): stack frames then name the user's files
 * and lines, and SOURCE_NAME's lines only where the bundle map says nothing (the typed default
 * export the CLI adds). Without a readable compiler map, the code is kept as it is.
 */
function composeInlineMap(js: string, bundleMap: PositionMap): string {
  const { code, map } = takeInlineMap(js);
  return map ? withInlineMap(code, composeMaps(map, bundleMap)) : js;
}

/**
 * compileCode's warnings alone, for code compileCode accepted (a create or update answers with
 * them): parses the module, nothing more. Throws ApiError("invalid_code") on code that does not parse.
 */
export function codeWarnings(source: string): Warning[] {
  return readingCode(() => moduleWarnings(parseModule(source)));
}

/** What a deploy warns of: the unawaited returns (with their "more like these" note), then the ignored launch options, MAX_WARNINGS + 1 at most. */
function moduleWarnings(sf: ts.SourceFile): Warning[] {
  return [...findUnawaitedReturns(sf), ...findLaunchOptions(sf)].slice(0, MAX_WARNINGS + 1);
}
