import { rotateWebhookSecret } from "../../handlers/rotateWebhookSecret";
import { lazyRoute } from "../lazyHandlers";
import { secretsRouteDeps } from "../routeDeps/secretsRouteDeps";

export const handler = lazyRoute(rotateWebhookSecret, secretsRouteDeps);
