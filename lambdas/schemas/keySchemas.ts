import { z } from "zod";
import { DateTime } from "./dateTime";

export const ACCOUNT_PATTERN = /^[A-Za-z0-9][A-Za-z0-9_.@:-]{0,127}$/;

export const CreateApiKeyBody = z
  .strictObject({
    name: z.string().max(200).nullable().optional().describe("A label for the key"),
    admin: z.boolean().optional().describe("Admin keys only: make an admin key"),
    account: z.string().regex(ACCOUNT_PATTERN).optional().describe("Admin keys only: the account the key is for (created if new)"),
    plan: z.string().optional().describe("Admin keys only: the account's plan"),
  })
  .meta({ id: "CreateApiKeyBody" });
export type CreateApiKeyBody = z.infer<typeof CreateApiKeyBody>;

export const ApiKeyInfo = z
  .object({
    key_id: z.string(),
    prefix: z.string().describe("The first characters of the key, to tell keys apart"),
    name: z.string().nullable(),
    account: z.string(),
    admin: z.boolean(),
    created_at: DateTime,
  })
  .meta({ id: "ApiKeyInfo" });

export const CreatedApiKey = ApiKeyInfo.extend({
  key: z.string().describe("The secret; shown only in this response"),
  plan: z.string(),
}).meta({ id: "CreatedApiKey" });

export const ApiKeyList = z.object({ items: z.array(ApiKeyInfo) }).meta({ id: "ApiKeyList" });

export const SetPlanBody = z.strictObject({ plan: z.string().describe("A plan name of the deployment") }).meta({ id: "SetPlanBody" });
