import { MAX_WARNINGS, type Warning } from "../code/warnings";

/**
 * A list of code warnings, each by its named fields: what is stored, read back or answered is
 * never another record's list, nor carries an attribute a warning does not have.
 */
export function copyWarnings(warnings: readonly Warning[]): Warning[] {
  // Within the caps a deploy gives them (a list, and each message), whatever a store item says.
  return warnings.slice(0, MAX_WARNINGS + 1).map((warning) => ({ code: warning.code, message: String(warning.message).slice(0, 1000), line: warning.line }));
}
