import type { Tool } from "@modelcontextprotocol/sdk/types.js";
import type { Deps } from "../deps";
import type { FunctionItem } from "../functions/types";
import type { Principal } from "../identity/identity";
import { inputSchemaOf } from "../functions/inputSchemaOf";
import { toolOutputSchema } from "./outputSchema";

/** At most this many tools are listed (the account's first active functions in name order). */
export const MAX_TOOLS = 500;

/** Functions read from the store per page while listing. */
const PAGE_SIZE = 100;

/** `tools/list`: the caller's account's active functions, in name order, up to MAX_TOOLS. */
export async function listTools(deps: Deps, principal: Principal): Promise<Tool[]> {
  const tools: Tool[] = [];
  let after: string | null = null;
  do {
    const page = await deps.store.functions.list(principal.account_id, PAGE_SIZE, after);
    for (const fn of page.items) {
      if (fn.status === "active" && fn.account_id === principal.account_id && tools.length < MAX_TOOLS) tools.push(toolOf(fn));
    }
    after = page.lastName;
  } while (after !== null && tools.length < MAX_TOOLS);
  return tools;
}

/**
 * One function as a tool: its name, its description (or one naming its parameters), its input
 * schema, and its output schema when its declared return type is an object.
 */
export function toolOf(fn: FunctionItem): Tool {
  const outputSchema = toolOutputSchema(fn.output_schema);
  return {
    name: fn.name,
    description: fn.description?.trim() ? fn.description : generatedDescription(fn),
    inputSchema: inputSchemaOf(fn),
    ...(outputSchema ? { outputSchema } : {}),
    // A browser automation reaches sites outside the service.
    annotations: { openWorldHint: true },
  };
}

function generatedDescription(fn: FunctionItem): string {
  const parameters = (fn.variables ?? []).map((v) => {
    const notes = [v.type, v.required ? "required" : v.default !== undefined ? `default ${v.default}` : "optional"];
    return `${v.name} (${notes.join(", ")})`;
  });
  const taking = parameters.length > 0 ? `Parameters: ${parameters.join("; ")}.` : "It takes no parameters.";
  return `Runs the browserfn function '${fn.name}', a browser automation, and returns its result. ${taking}`;
}
