import { codeWarnings } from "../code/compileCode";
import { createFunction as create } from "../functions/createFunction";
import { toRecord } from "../functions/toRecord";
import { defineRoute } from "../http/defineRoute";
import { json } from "../http/response";
import { CreateFunctionBody, nameIssueCode } from "../schemas/functionSchemas";

/** POST /functions: deploy a new function. */
export const createFunction = defineRoute(
  { body: CreateFunctionBody, bodyIssueCode: nameIssueCode },
  async ({ body, principal, baseUrl }, deps) => {
    const fn = await create(deps, principal, body);
    const record = toRecord(fn, baseUrl, codeWarnings(body.code));
    return json(201, record, { location: `${record.url}/info` });
  },
);
