import type { ParameterInfo } from "../code/extractParameters";

/**
 * A function's parameters as its records keep them: JSON text, one attribute. As a list of maps
 * (how records were written before), a module of 3,000 parameters made 3,000 maps, each
 * marshalled on the request thread and each validated by the store on every write (the local
 * store, dynalite, is one thread: every account's requests waited behind it).
 */
export function parametersToText(variables: readonly ParameterInfo[] | null): string | null {
  return variables === null ? null : JSON.stringify(variables);
}

/** The parameters of a stored record: its text, or the list of maps of a record written before. */
export function parametersFrom(stored: unknown): ParameterInfo[] | null {
  if (Array.isArray(stored)) return stored as ParameterInfo[];
  if (typeof stored !== "string") return null;
  try {
    const value = JSON.parse(stored) as unknown;
    return Array.isArray(value) ? (value as ParameterInfo[]) : null;
  } catch {
    return null;
  }
}
