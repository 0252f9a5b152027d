import { DeliveryList, WebhookSecretAnswer } from "../../schemas/webhookSchemas";
import { DeliveriesQuery } from "../../schemas/querySchemas";
import type { RouteSpec } from "../routeSpec";

/** A function's webhook deliveries and signing secret. */
export const WEBHOOK_ROUTES = [
  {
    operationId: "listDeliveries",
    method: "GET",
    path: "/functions/{ref}/deliveries",
    summary: "The function's webhook deliveries, newest first (limit 1..500, default 50)",
    tag: "webhooks",
    auth: true,
    status: 200,
    query: DeliveriesQuery,
    response: DeliveryList,
    errors: ["function_not_found", "invalid_limit"],
  },
  {
    operationId: "rotateWebhookSecret",
    method: "POST",
    path: "/functions/{ref}/webhook-secret",
    summary: "Replace the webhook signing secret (answered once; the old one stops signing at once)",
    tag: "webhooks",
    auth: true,
    status: 200,
    response: WebhookSecretAnswer,
    errors: ["function_not_found"],
  },
] as const satisfies readonly RouteSpec[];
