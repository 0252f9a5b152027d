import type { Deps } from "../deps";
import type { ParameterInfo } from "../code/extractParameters";
import type { InputSchema } from "../code/jsonSchema";
import type { FunctionItem } from "../functions/types";
import { ApiError } from "../http/errors";

/** The version an invocation runs and what its parameters are checked against. */
export interface InvokedVersion {
  version: number;
  variables: ParameterInfo[];
  schema: InputSchema | undefined;
}

/**
 * The version `X-Function-Version` names (the latest without it; 404 `version_not_found` for
 * one the function does not have), with its declared parameters and input schema.
 */
export async function invokedVersion(deps: Deps, fn: FunctionItem, header: string | undefined): Promise<InvokedVersion> {
  const version = await pickVersion(fn.latest_version, header);
  const meta = version === fn.latest_version ? undefined : await deps.store.versions.meta(fn.function_id, version);
  const variables = meta ? meta.variables : version === fn.latest_version ? (fn.variables ?? []) : [];
  const schema = meta ? meta.input_schema : version === fn.latest_version ? fn.input_schema : undefined;
  return { version, variables, schema };
}

async function pickVersion(latest: number, header: string | undefined): Promise<number> {
  if (header === undefined || header === "") return latest;
  const wanted = /^[1-9]\d{0,8}$/.test(header.trim()) ? Number(header.trim()) : 0;
  if (wanted < 1 || wanted > latest) {
    throw new ApiError("version_not_found", `No version '${header}'; versions are 1 to ${latest}`, { version: header });
  }
  return wanted;
}

/** `Idempotency-Key`: 1..255 characters; absent, null. */
export function idempotencyKey(header: string | undefined): string | null {
  if (header === undefined) return null;
  if (header.length < 1 || header.length > 255) {
    throw new ApiError("invalid_request", "Idempotency-Key must be 1 to 255 characters", { field: "Idempotency-Key" });
  }
  return header;
}
