import { resolveFunction } from "../functions/resolveFunction";
import { defineRoute } from "../http/defineRoute";
import { parseLimit } from "../http/limit";
import { json } from "../http/response";
import { toDeliveryView } from "../webhooks/toDeliveryView";

/** GET /functions/{ref}/deliveries?limit=N: its webhook deliveries, newest first. */
export const listDeliveries = defineRoute({}, async ({ params, principal, event }, deps) => {
  const limit = parseLimit(event.queryStringParameters?.limit, 50, 500);
  const fn = await resolveFunction(deps.store, principal, params.ref ?? "");
  const deliveries = await deps.store.deliveries.recent(fn.function_id, limit);
  return json(200, { items: deliveries.map(toDeliveryView) });
});
