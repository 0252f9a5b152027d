import { toRecord } from "../functions/toRecord";
import { updateFunction as update } from "../functions/updateFunction";
import { defineRoute } from "../http/defineRoute";
import { json } from "../http/response";
import { UpdateFunctionBody } from "../schemas/functionSchemas";
import { ensureWebhookSecret } from "../webhooks/webhookSecret";

/** PATCH /functions/{ref}: change settings; new code adds a version; the first webhooks get a signing secret, answered once. */
export const updateFunction = defineRoute(
  { body: UpdateFunctionBody },
  async ({ body, params, principal, baseUrl }, deps) => {
    const fn = await update(deps, principal, params.ref ?? "", body);
    const secret = await ensureWebhookSecret(deps, fn);
    const record = toRecord(fn, baseUrl);
    if (secret) record.webhook_secret = secret;
    return json(200, record);
  },
);
