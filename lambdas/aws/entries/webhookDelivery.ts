import { lazyWebhookDelivery } from "../lazyHandlers";

export const handler = lazyWebhookDelivery();
