import type { Warning } from "../code/findUnawaitedReturns";

/**
 * A list of code warnings, each by its named fields: what is stored, read back or answered is
 * never another record's list, nor carries an attribute a warning does not have.
 */
export function copyWarnings(warnings: readonly Warning[]): Warning[] {
  return warnings.map((warning) => ({ code: warning.code, message: warning.message, line: warning.line }));
}
