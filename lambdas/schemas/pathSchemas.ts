import { z } from "zod";
import { ARTIFACT_NAME_PATTERN } from "../artifacts/artifacts";
import { SECRET_NAME } from "../secrets/functionSecrets";
import { FUNCTION_ID_PATTERN, NAME_PATTERN } from "./functionSchemas";
import { ACCOUNT_PATTERN } from "./keySchemas";

/**
 * The path parameters of the routes, by the name their templates give them (`{ref}`,
 * `{run_id}`…). A route whose `{name}` means something else says so (RouteSpec.params).
 * A value that does not fit names nothing: 404 (or 400 `invalid_name` for a secret's name).
 */
export const PATH_PARAMETERS = {
  ref: z.string().min(1).describe(`A function's name (${NAME_PATTERN.source}), or its function_id (${FUNCTION_ID_PATTERN.source})`),
  run_id: z.string().min(1).describe("A run's id: run_ + 26 lowercase ULID characters"),
  batch_id: z.string().min(1).describe("A batch's id: batch_ + 26 lowercase ULID characters"),
  version: z.string().regex(/^[1-9][0-9]*$/).describe("A version of the function: 1, 2, …"),
  id: z.string().min(1).describe("An API key's key_id: key_ + 26 lowercase ULID characters"),
  account: z.string().regex(ACCOUNT_PATTERN).describe("An account id"),
} as const satisfies Record<string, z.ZodType>;

/** `{function_id}` of a fork: only an id names another account's shared function. */
export const FunctionIdParam = z.string().regex(FUNCTION_ID_PATTERN).describe("The function_id (fn_…) of the function to copy");

/** `{name}` of a secret. */
export const SecretNameParam = z.string().regex(SECRET_NAME).describe("The secret's name, e.g. API_TOKEN");

/** `{name}` of an artifact. */
export const ArtifactNameParam = z.string().regex(ARTIFACT_NAME_PATTERN).describe("The artifact's file name, as listed");
