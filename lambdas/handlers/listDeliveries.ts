import { resolveFunction } from "../functions/resolveFunction";
import { defineRoute } from "../http/defineRoute";
import { json } from "../http/response";
import { DeliveriesQuery } from "../schemas/querySchemas";
import { toDeliveryView } from "../webhooks/toDeliveryView";

/** GET /functions/{ref}/deliveries?limit=N: its webhook deliveries, newest first. */
export const listDeliveries = defineRoute({ query: DeliveriesQuery }, async ({ params, principal, query }, deps) => {
  const fn = await resolveFunction(deps.store, principal, params.ref ?? "");
  const deliveries = await deps.store.deliveries.recent(fn.function_id, query.limit);
  return json(200, { items: deliveries.map(toDeliveryView) });
});
