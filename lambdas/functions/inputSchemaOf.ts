import type { InputSchema } from "../code/jsonSchema";
import { schemaFromVariables } from "../invoke/schemaFromTypeText";
import type { FunctionItem, VersionItem } from "./types";

/**
 * The input schema of a function's latest version, or of one version: the one derived at
 * deploy, or, for what was deployed before schemas were derived, the one built from its
 * parameters' type text (schemaFromVariables: what invocations of it are checked against).
 */
export function inputSchemaOf(item: Pick<FunctionItem, "input_schema" | "variables"> | VersionItem): InputSchema {
  return item.input_schema ?? schemaFromVariables(item.variables ?? []);
}
