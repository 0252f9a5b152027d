import type { CodeAnalysis } from "../../lambdas/code/analysis/codeAnalysis";
import { codeWarnings, compileCode } from "../../lambdas/code/compileCode";

/**
 * CodeAnalysis on the calling thread, with no budget: for tests of other parts (the AWS run
 * pipeline, redeploys) whose Deps are built by hand. The service's own adapter is AnalysisPool
 * (worker threads within a budget), which test/integration/hostileDeploys.test.ts tests.
 */
export const inlineCodeAnalysis: CodeAnalysis = {
  compile: async (source) => compileCode(source),
  warnings: async (source) => codeWarnings(source),
  close: async () => undefined,
};
