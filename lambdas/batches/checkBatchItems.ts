import type { ParameterInfo } from "../code/extractParameters";
import type { InputSchema } from "../code/jsonSchema";
import { ApiError } from "../http/errors";
import { validateParams } from "../invoke/validateParams";
import { MAX_BATCH_ITEMS } from "./types";

/** One bad item of a batch: where it is in `items`, and what is wrong with it (as an invocation's 400 says). */
interface BadItem {
  index: number;
  message: string;
  /** The problems of its parameters (empty when the item is not an object at all). */
  parameters: unknown[];
  /** What the item was instead of an object. */
  received?: string;
}

/**
 * The items of a batch body (`{items: [params, …]}`) as checked parameters, each checked as an
 * invocation's are (validateParams), all before anything starts. Not a list: 400
 * `invalid_request`; an empty one: `batch_empty`; more than MAX_BATCH_ITEMS: `batch_too_large`;
 * any bad item (not an object, or parameters the version refuses): `invalid_parameters`, whose
 * `details.items` names each bad item's index and problems.
 */
export function checkBatchItems(body: unknown, variables: ParameterInfo[], schema: InputSchema | undefined): Record<string, unknown>[] {
  const items = body !== null && typeof body === "object" && !Array.isArray(body) ? (body as { items?: unknown }).items : undefined;
  if (!Array.isArray(items)) {
    throw new ApiError("invalid_request", "The body must be a JSON object {\"items\": [params, …]}, items a list of parameter objects", { field: "items" });
  }
  if (items.length === 0) throw new ApiError("batch_empty", "A batch needs at least one item", { min: 1, max: MAX_BATCH_ITEMS });
  if (items.length > MAX_BATCH_ITEMS) {
    throw new ApiError("batch_too_large", `A batch has at most ${MAX_BATCH_ITEMS} items, not ${items.length}`, { max: MAX_BATCH_ITEMS, count: items.length });
  }
  const checked: Record<string, unknown>[] = [];
  const bad: BadItem[] = [];
  items.forEach((item: unknown, index) => {
    try {
      checked.push(validateParams(variables, item, "json", schema));
    } catch (error) {
      if (!(error instanceof ApiError) || error.code !== "invalid_parameters") throw error;
      const { parameters, received } = error.details;
      const entry: BadItem = { index, message: error.message, parameters: Array.isArray(parameters) ? parameters : [] };
      if (typeof received === "string") entry.received = received;
      bad.push(entry);
    }
  });
  if (bad.length > 0) {
    const which = bad.slice(0, 5).map((entry) => entry.index).join(", ");
    throw new ApiError("invalid_parameters", `${bad.length} of ${items.length} items are invalid (index ${which}${bad.length > 5 ? ", …" : ""}); nothing was started`, {
      items: bad,
    });
  }
  return checked;
}
