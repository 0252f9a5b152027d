import { resolveFunction } from "../functions/resolveFunction";
import { defineRoute } from "../http/defineRoute";
import { ApiError } from "../http/errors";
import { json } from "../http/response";
import { rotateWebhookSecret as rotate } from "../webhooks/webhookSecret";

/** POST /functions/{ref}/webhook-secret: a new signing secret, answered once; the old one stops signing at once. */
export const rotateWebhookSecret = defineRoute({}, async ({ params, principal }, deps) => {
  const ref = params.ref ?? "";
  const fn = await resolveFunction(deps.store, principal, ref);
  const secret = await rotate(deps, fn);
  if (secret === null) throw new ApiError("function_not_found", `No function named '${ref}'`, { ref });
  return json(200, { webhook_secret: secret });
});
