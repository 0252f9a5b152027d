import { codeWarnings } from "../code/compileCode";
import { toRecord } from "../functions/toRecord";
import { updateFunction as update } from "../functions/updateFunction";
import { defineRoute } from "../http/defineRoute";
import { json } from "../http/response";
import { UpdateFunctionBody } from "../schemas/functionSchemas";

/** PATCH /functions/{ref}: change settings; new code adds a version. */
export const updateFunction = defineRoute(
  { body: UpdateFunctionBody },
  async ({ body, params, principal, baseUrl }, deps) => {
    const fn = await update(deps, principal, params.ref ?? "", body);
    return json(200, toRecord(fn, baseUrl, body.code === undefined ? [] : codeWarnings(body.code)));
  },
);
