import type * as CompileCodeModule from "./compileCode";
import type { CompiledCode, Warning } from "./compileCode";

/**
 * compileCode.ts, required on first use rather than at start-up: it loads the TypeScript
 * compiler, ≈ 50 MB of memory that a service needs only once code is deployed (the local
 * service starts, serves and runs functions without it). A static `require`, so that tsx
 * compiles it and esbuild bundles it into the Lambda handlers that deploy code.
 */
function compiler(): typeof CompileCodeModule {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  return require("./compileCode") as typeof CompileCodeModule;
}

/** compileCode (see compileCode.ts), with the compiler loaded on the first call. */
export function compileCode(source: string): CompiledCode {
  return compiler().compileCode(source);
}

/** codeWarnings (see compileCode.ts), with the compiler loaded on the first call. */
export function codeWarnings(source: string): Warning[] {
  return compiler().codeWarnings(source);
}
