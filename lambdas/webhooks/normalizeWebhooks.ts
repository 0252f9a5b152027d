import { ApiError } from "../http/errors";
import { literalAddressOf, refusedAddressReason } from "../network/addressPolicy";
import { WEBHOOK_EVENTS, type Webhook, type WebhookEvent } from "./webhookTypes";

/** A webhook as a request sends it (the schema has checked the URL's form and the events' names). */
export interface WebhookRequest {
  url: string;
  events?: readonly WebhookEvent[];
}

/**
 * The webhooks to store, field by field: events defaulted to all three, each once, in a fixed
 * order. A URL whose host is a loopback, private or link-local address written as such (or
 * `localhost`) is refused with 400 at once, unless the local network is allowed; a host name is
 * checked when each delivery is sent, against every address it resolves to then.
 */
export function normalizeWebhooks(webhooks: readonly WebhookRequest[], allowLocalNetwork: boolean): Webhook[] {
  return webhooks.map((webhook, index) => {
    const url = new URL(webhook.url);
    if (!allowLocalNetwork) {
      const literal = literalAddressOf(url.hostname);
      const reason = literal === null ? localhostReason(url.hostname) : refusedAddressReason(literal);
      if (reason) {
        throw new ApiError("invalid_request", `webhooks[${index}].url: ${reason}; webhook targets must be public unless BROWSERFN_ALLOW_LOCAL_NETWORK is true`, {
          issues: [{ field: `webhooks.${index}.url`, message: reason }],
        });
      }
    }
    const asked = new Set<WebhookEvent>(webhook.events ?? WEBHOOK_EVENTS);
    return { url: webhook.url, events: WEBHOOK_EVENTS.filter((event) => asked.has(event)) };
  });
}

function localhostReason(hostname: string): string | null {
  const host = hostname.toLowerCase().replace(/\.$/, "");
  return host === "localhost" || host.endsWith(".localhost") ? `${hostname} names the host itself` : null;
}
