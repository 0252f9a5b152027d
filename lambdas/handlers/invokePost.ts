import { defineRoute, readJsonBody } from "../http/defineRoute";
import { invokeFunction } from "../invoke/invokeFunction";

/** POST /functions/{ref}: invoke with a JSON object body of parameters. */
export const invokePost = defineRoute({}, async (request, deps) =>
  invokeFunction(request, deps, readJsonBody(request.event, deps), "json"),
);
