import { z } from "zod";
import { DateTime } from "./dateTime";
import { MAX_WEBHOOK_URL_CHARS, MAX_WEBHOOKS, WEBHOOK_EVENTS } from "../webhooks/webhookTypes";

/** An absolute http(s) URL without credentials (the signature authenticates the sender, and URLs are shown in records). */
function webhookUrlProblem(text: string): string | null {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return "must be an absolute http:// or https:// URL";
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") return "must be an absolute http:// or https:// URL";
  if (url.username !== "" || url.password !== "") return "must not carry credentials (user:password@); receivers check the webhook-signature header instead";
  if (url.hostname === "") return "must name a host";
  return null;
}

const WebhookUrl = z
  .string()
  .max(MAX_WEBHOOK_URL_CHARS)
  .superRefine((text, ctx) => {
    const problem = webhookUrlProblem(text);
    if (problem) ctx.addIssue({ code: "custom", message: problem });
  })
  .describe(`Absolute http(s) URL, at most ${MAX_WEBHOOK_URL_CHARS} characters; receives a POST per event`);

export const WebhookEventName = z.enum(WEBHOOK_EVENTS).meta({ id: "WebhookEvent" });

/** A webhook as create and update take it. */
export const WebhookInput = z
  .strictObject({
    url: WebhookUrl,
    events: z.array(WebhookEventName).min(1).max(WEBHOOK_EVENTS.length).optional().describe("Default: all four"),
  })
  .meta({ id: "WebhookInput" });
export type WebhookInput = z.infer<typeof WebhookInput>;

export const WebhooksInput = z
  .array(WebhookInput)
  .max(MAX_WEBHOOKS)
  .describe(`At most ${MAX_WEBHOOKS}; [] removes them all. Setting the first ones creates the function's webhook_secret, answered once`);

/** A webhook as the function record shows it. */
export const WebhookView = z.object({ url: z.string(), events: z.array(WebhookEventName) }).meta({ id: "Webhook" });

export const DeliveryView = z
  .object({
    delivery_id: z.string().describe("The webhook-id header of every attempt"),
    event: WebhookEventName,
    run_id: z.string(),
    url: z.string(),
    attempts: z.int(),
    status: z.enum(["pending", "delivered", "failed", "cancelled"]),
    last_status_code: z.int().nullable().describe("HTTP status of the last attempt; null when it got no answer"),
    last_error: z.string().nullable().describe("Why the last attempt failed, when it did"),
    next_attempt_at: DateTime.nullable().describe("When the next attempt is due (null once delivered or failed)"),
    created_at: DateTime,
  })
  .meta({ id: "Delivery" });

export const DeliveryList = z.object({ items: z.array(DeliveryView) }).meta({ id: "DeliveryList" });

export const WebhookSecretAnswer = z
  .object({ webhook_secret: z.string().describe("`whsec_` + base64 of 32 random bytes; shown only in this response") })
  .meta({ id: "WebhookSecret" });
