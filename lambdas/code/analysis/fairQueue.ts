/**
 * Items waiting by account, taken in turns: each take serves the next account in line (that
 * `eligible` allows), its oldest item first, and puts that account at the back of the line. One
 * account's hundred waiting items delay another account's one by at most one turn.
 */
export class FairQueue<T> {
  /** Accounts with items waiting, in the order they are served. */
  private readonly line: string[] = [];
  private readonly items = new Map<string, T[]>();
  private count = 0;

  get size(): number {
    return this.count;
  }

  push(account: string, item: T): void {
    const items = this.items.get(account);
    if (items) items.push(item);
    else {
      this.items.set(account, [item]);
      this.line.push(account);
    }
    this.count++;
  }

  /** The oldest item of the first account in line that `eligible` allows; undefined when none. */
  take(eligible: (account: string) => boolean): T | undefined {
    const index = this.line.findIndex(eligible);
    if (index < 0) return undefined;
    const [account] = this.line.splice(index, 1) as [string];
    const items = this.items.get(account) ?? [];
    const item = items.shift();
    if (items.length > 0) this.line.push(account);
    else this.items.delete(account);
    if (item !== undefined) this.count--;
    return item;
  }

  /** How many accounts with items waiting `eligible` allows. */
  accounts(eligible: (account: string) => boolean): number {
    return this.line.filter(eligible).length;
  }

  /** Every item, oldest first by account; the queue is empty after. */
  drain(): T[] {
    const all = this.line.flatMap((account) => this.items.get(account) ?? []);
    this.line.length = 0;
    this.items.clear();
    this.count = 0;
    return all;
  }
}
