import type { Tool } from "@modelcontextprotocol/sdk/types.js";
import type { JsonSchema } from "../code/jsonSchema";
import { openObjects } from "../code/openObjects";

export type ToolOutputSchema = NonNullable<Tool["outputSchema"]>;

/**
 * A tool's `outputSchema`: the function's declared return type (output_schema, derived at
 * deploy), when it is a JSON object, the only kind MCP allows there (`type: "object"` at the
 * root). Undefined for any other return type, or none declared: the tool then has no
 * outputSchema and its result is JSON text (and structured content when it is an object).
 *
 * Objects are open here (openObjects): a function that returns an object with more members
 * than its declared type still fits it, and a client must not reject that result.
 */
export function toolOutputSchema(declared: JsonSchema | undefined): ToolOutputSchema | undefined {
  if (!declared || declared.type !== "object") return undefined;
  const { $schema, ...rest } = declared;
  return { ...(openObjects(rest) as ToolOutputSchema), ...($schema === undefined ? {} : { $schema }) };
}
