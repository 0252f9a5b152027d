import { toRecord } from "../functions/toRecord";
import { defineRoute } from "../http/defineRoute";
import { ApiError } from "../http/errors";
import { json } from "../http/response";
import { NAME_PATTERN } from "../schemas/functionSchemas";
import { ListFunctionsQuery } from "../schemas/querySchemas";

/** GET /functions?limit=&cursor=: the account's functions in name order. */
export const listFunctions = defineRoute({ query: ListFunctionsQuery }, async ({ query, principal, baseUrl }, deps) => {
  const page = await deps.store.functions.list(principal.account_id, query.limit, decodeCursor(query.cursor));
  return json(200, {
    items: page.items.map((fn) => {
      const { function_id, name, description, url, status, latest_version, schedule, shared, updated_at } = toRecord(fn, baseUrl);
      return { function_id, name, description, url, status, latest_version, schedule, shared, updated_at };
    }),
    next_cursor: page.lastName === null ? null : Buffer.from(page.lastName, "utf8").toString("base64url"),
  });
});

function decodeCursor(cursor: string | undefined): string | null {
  if (cursor === undefined) return null;
  const name = Buffer.from(cursor, "base64url").toString("utf8");
  if (!NAME_PATTERN.test(name)) throw new ApiError("invalid_request", "cursor is not a next_cursor this API returned");
  return name;
}
