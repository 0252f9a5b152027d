import { createFunction as create } from "../functions/createFunction";
import { toRecord } from "../functions/toRecord";
import { defineRoute } from "../http/defineRoute";
import { json } from "../http/response";
import { CreateFunctionBody, nameIssueCode } from "../schemas/functionSchemas";
import { ensureWebhookSecret } from "../webhooks/webhookSecret";

/** POST /functions: deploy a new function (with webhooks: its signing secret is answered once). */
export const createFunction = defineRoute(
  { body: CreateFunctionBody, bodyIssueCode: nameIssueCode },
  async ({ body, principal, baseUrl }, deps) => {
    const fn = await create(deps, principal, body);
    const secret = await ensureWebhookSecret(deps, fn);
    const record = toRecord(fn, baseUrl);
    if (secret) record.webhook_secret = secret;
    return json(201, record, { location: `${record.url}/info` });
  },
);
