/**
 * The streamed responses the local server holds open (GET /runs/{id}/events), by owner (an
 * account): at most `maxPerOwner` each, and all of them ended at once when the service stops
 * (the server's close waits for open responses).
 */
export class OpenStreams {
  private readonly byOwner = new Map<string, Set<AbortController>>();

  constructor(readonly maxPerOwner: number) {}

  /** A new stream of `owner`, ended by aborting its controller; null when the owner holds the most it may. */
  add(owner: string): AbortController | null {
    const open = this.byOwner.get(owner) ?? new Set<AbortController>();
    if (open.size >= this.maxPerOwner) return null;
    const controller = new AbortController();
    open.add(controller);
    this.byOwner.set(owner, open);
    return controller;
  }

  /** The stream has ended (whichever way). */
  remove(owner: string, controller: AbortController): void {
    const open = this.byOwner.get(owner);
    if (!open) return;
    open.delete(controller);
    if (open.size === 0) this.byOwner.delete(owner);
  }

  /** How many streams are open, over every owner. */
  get count(): number {
    let count = 0;
    for (const open of this.byOwner.values()) count += open.size;
    return count;
  }

  /** Ends every open stream (the service stops). */
  endAll(): void {
    for (const open of this.byOwner.values()) for (const controller of open) controller.abort();
  }
}
