import { ulid } from "ulid";
import { FUNCTION_ID_PATTERN } from "../schemas/functionSchemas";

/** `fn_` + 26 lowercase ULID characters. */
export function newFunctionId(): string {
  return `fn_${ulid().toLowerCase()}`;
}

export function isFunctionId(ref: string): boolean {
  return FUNCTION_ID_PATTERN.test(ref);
}
