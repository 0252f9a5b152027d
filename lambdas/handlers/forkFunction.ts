import { forkFunction as fork } from "../functions/forkFunction";
import { isFunctionId } from "../functions/ids";
import { toRecord } from "../functions/toRecord";
import { defineRoute } from "../http/defineRoute";
import { ApiError } from "../http/errors";
import { json } from "../http/response";
import { ForkFunctionBody, nameIssueCode } from "../schemas/functionSchemas";

/** POST /functions/{function_id}/fork: copy a shared (or own) function into the caller's account. */
export const forkFunction = defineRoute(
  { body: ForkFunctionBody, bodyIssueCode: nameIssueCode },
  async ({ body, params, principal, baseUrl }, deps) => {
    const functionId = params.ref ?? "";
    if (!isFunctionId(functionId)) {
      throw new ApiError("function_not_found", `Fork takes a function_id (fn_…), not '${functionId}'`, {
        ref: functionId,
      });
    }
    const fn = await fork(deps, principal, functionId, body.name);
    const record = toRecord(fn, baseUrl);
    return json(201, record, { location: `${record.url}/info` });
  },
);
