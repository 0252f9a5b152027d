import { defineRoute } from "../http/defineRoute";
import { invokeFunction } from "../invoke/invokeFunction";

/** GET /functions/{ref}?p=v: invoke with query parameters coerced to the declared types. */
export const invokeGet = defineRoute({}, async (request, deps) =>
  invokeFunction(request, deps, request.event.queryStringParameters ?? {}, "query"),
);
