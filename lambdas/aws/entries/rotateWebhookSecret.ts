import { rotateWebhookSecret } from "../../handlers/rotateWebhookSecret";
import { lazyRoute } from "../lazyHandlers";

export const handler = lazyRoute(rotateWebhookSecret);
