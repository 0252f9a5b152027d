import { deleteFunction as remove } from "../functions/deleteFunction";
import { defineRoute } from "../http/defineRoute";
import { noContent } from "../http/response";

/** DELETE /functions/{ref}: the function, its versions, schedule and runtime. */
export const deleteFunction = defineRoute({}, async ({ params, principal }, deps) => {
  await remove(deps, principal, params.ref ?? "");
  return noContent();
});
