import { ulid } from "ulid";
import { FUNCTION_ID_PATTERN } from "../schemas/functionSchemas";

/** `fn_` + 26 lowercase ULID characters. */
export function newFunctionId(): string {
  return `fn_${ulid().toLowerCase()}`;
}

/** A deploy's token: `dep_` + 26 lowercase ULID characters (see FunctionItem.deploy_id). */
export function newDeployId(): string {
  return `dep_${ulid().toLowerCase()}`;
}

export const DEPLOY_ID_PATTERN = /^dep_[0-9a-z]{26}$/;

export function isFunctionId(ref: string): boolean {
  return FUNCTION_ID_PATTERN.test(ref);
}
