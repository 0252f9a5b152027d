import type { DeliveryItem } from "./webhookTypes";

/** One entry of `GET /functions/{ref}/deliveries`. */
export function toDeliveryView(delivery: DeliveryItem) {
  return {
    delivery_id: delivery.delivery_id,
    event: delivery.event,
    run_id: delivery.run_id,
    url: delivery.url,
    attempts: delivery.attempts,
    status: delivery.status,
    last_status_code: delivery.last_status_code,
    last_error: delivery.last_error,
    next_attempt_at: delivery.next_attempt_at,
    created_at: delivery.created_at,
  };
}
