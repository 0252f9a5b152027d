import type { DeliveryItem } from "./webhookTypes";

/**
 * Which due deliveries to start now, fairly between accounts: in rounds, one per account per
 * round, the accounts with the fewest attempts under way first (ties in a turn order that moves
 * on each call), none past `perAccount` under way, and at most `slots` in all. One account's
 * backlog, however long, slow or failing, takes at most its share: another account's delivery
 * is started as soon as a slot is free.
 */
export function fairTurns(
  due: ReadonlyMap<string, readonly DeliveryItem[]>,
  underWay: ReadonlyMap<string, number>,
  limits: { slots: number; perAccount: number },
  turn: number,
): DeliveryItem[] {
  const accounts = [...due.keys()].sort();
  const start = accounts.length === 0 ? 0 : turn % accounts.length;
  const rotated = [...accounts.slice(start), ...accounts.slice(0, start)];
  const busy = new Map(rotated.map((account) => [account, underWay.get(account) ?? 0]));
  const next = new Map(rotated.map((account) => [account, 0]));
  const chosen: DeliveryItem[] = [];
  for (let progressed = true; progressed && chosen.length < limits.slots; ) {
    progressed = false;
    // Stable: equal counts keep the turn order.
    const order = [...rotated].sort((a, b) => (busy.get(a) ?? 0) - (busy.get(b) ?? 0));
    for (const account of order) {
      if (chosen.length >= limits.slots) break;
      const count = busy.get(account) ?? 0;
      const index = next.get(account) ?? 0;
      const delivery = due.get(account)?.[index];
      if (count >= limits.perAccount || delivery === undefined) continue;
      chosen.push(delivery);
      busy.set(account, count + 1);
      next.set(account, index + 1);
      progressed = true;
    }
  }
  return chosen;
}
