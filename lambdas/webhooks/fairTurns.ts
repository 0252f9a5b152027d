import type { DeliveryItem } from "./webhookTypes";

/** How many attempts are under way, by account and by endpoint (endpointOf). */
export interface UnderWay {
  byAccount: ReadonlyMap<string, number>;
  byEndpoint: ReadonlyMap<string, number>;
}

export interface TurnLimits {
  /** Attempts that may start now, in all. */
  slots: number;
  /** Attempts of one account under way at most. */
  perAccount: number;
  /** Attempts to one endpoint (an account's receiver: its URL's origin) under way at most. */
  perEndpoint: number;
}

/**
 * The endpoint a delivery goes to: the account and its URL's origin (scheme, host, port). A
 * receiver that never answers holds its endpoint's share only, not the rest of its account's.
 */
export function endpointOf(delivery: Pick<DeliveryItem, "account_id" | "url">): string {
  let origin: string;
  try {
    origin = new URL(delivery.url).origin;
  } catch {
    origin = delivery.url;
  }
  return `${delivery.account_id} ${origin}`;
}

/**
 * Which due deliveries to start now, fairly between accounts, then between an account's
 * endpoints: in rounds, one per account per round, the accounts with the fewest attempts under
 * way first (ties in a turn order that moves on each call), none past `perAccount` under way,
 * and at most `slots` in all. Within an account, the endpoint with the fewest under way goes
 * first (the soonest due of its deliveries), none past `perEndpoint`. One account's backlog,
 * however long, slow or failing, takes at most its share: another account's delivery is started
 * as soon as a slot is free; and a receiver that never answers holds back only the deliveries to
 * it, not its account's other webhooks.
 */
export function fairTurns(due: ReadonlyMap<string, readonly DeliveryItem[]>, underWay: UnderWay, limits: TurnLimits, turn: number): DeliveryItem[] {
  const accounts = [...due.keys()].sort();
  const start = accounts.length === 0 ? 0 : turn % accounts.length;
  const rotated = [...accounts.slice(start), ...accounts.slice(0, start)];
  const busy = new Map(rotated.map((account) => [account, underWay.byAccount.get(account) ?? 0]));
  const endpoints = new Map(underWay.byEndpoint);
  // Each delivery's endpoint, found once.
  const left = new Map(rotated.map((account) => [account, (due.get(account) ?? []).map((delivery) => ({ delivery, endpoint: endpointOf(delivery) }))]));
  const chosen: DeliveryItem[] = [];
  for (let progressed = true; progressed && chosen.length < limits.slots; ) {
    progressed = false;
    // Stable: equal counts keep the turn order.
    const order = [...rotated].sort((a, b) => (busy.get(a) ?? 0) - (busy.get(b) ?? 0));
    for (const account of order) {
      if (chosen.length >= limits.slots) break;
      const count = busy.get(account) ?? 0;
      if (count >= limits.perAccount) continue;
      const remaining = left.get(account) ?? [];
      const index = leastBusyEndpoint(remaining, endpoints, limits.perEndpoint);
      const next = remaining[index];
      if (next === undefined) continue;
      remaining.splice(index, 1);
      const { delivery, endpoint } = next;
      chosen.push(delivery);
      busy.set(account, count + 1);
      endpoints.set(endpoint, (endpoints.get(endpoint) ?? 0) + 1);
      progressed = true;
    }
  }
  return chosen;
}

/** The soonest due delivery whose endpoint has the fewest under way (below `most`); -1 when none. */
function leastBusyEndpoint(deliveries: readonly { endpoint: string }[], endpoints: ReadonlyMap<string, number>, most: number): number {
  let best = -1;
  let bestCount = most;
  deliveries.forEach(({ endpoint }, index) => {
    const count = endpoints.get(endpoint) ?? 0;
    if (count < bestCount) {
      best = index;
      bestCount = count;
    }
  });
  return best;
}
