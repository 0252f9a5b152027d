import type { CompiledCode, Warning } from "../compileCode";

/**
 * Reads deployed code — parse, parameters, schemas, warnings, compile to JavaScript — away from
 * the thread that serves requests, within a budget (lambdas/code/analysis/analysisPool.ts). Every
 * rejection is an ApiError("invalid_code"), a module past the budget too.
 */
export interface CodeAnalysis {
  /** compileCode (see compileCode.ts) of `source`, deployed by `account` (whose deploys take turns with other accounts'). */
  compile(source: string, account: string): Promise<CompiledCode>;
  /** codeWarnings (see compileCode.ts) of `source`. */
  warnings(source: string, account: string): Promise<Warning[]>;
  /** Ends the workers; analyses under way or waiting are refused. */
  close(): Promise<void>;
}

/** What one deploy's analysis may take; past either, the deploy fails with 400 `invalid_code`. */
export interface AnalysisBudget {
  /** Time on the analysis worker, from the moment it takes the deploy (default 5 s). */
  timeoutMs: number;
  /** The analysis worker's JavaScript heap (V8's old generation), the compiler's ≈ 70 MB included (default 512 MB). */
  memoryMb: number;
}

export const DEFAULT_ANALYSIS_BUDGET: AnalysisBudget = { timeoutMs: 5_000, memoryMb: 512 };

/** Analysis workers at most (one per account at a time; more accounts wait their turn). */
export const DEFAULT_ANALYSIS_WORKERS = 2;
