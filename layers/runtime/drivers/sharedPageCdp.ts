import type { CDPSession, Page } from "playwright-core";

/** A hold on a Playwright page's shared CDP session: its own listeners, taken off when released. */
export interface PageCdpHold {
  send(method: string, params?: object): Promise<unknown>;
  on(event: string, handler: (params: never) => void): unknown;
  /** Takes this hold's listeners off; the session is detached once no hold is left. */
  detach(): Promise<void>;
}

/** Each page's one session of browserfn's own, with how many holds it has. */
const sessions = new WeakMap<Page, { session: Promise<CDPSession>; holds: number }>();

/**
 * A hold on the one CDP session browserfn keeps on a Playwright page, shared by the profile's
 * restore and the runner's page hooks (recordings, the live view). Playwright opens a page's
 * CDP session in a round trip that waits for the new page's renderer (25–60 ms on the bench's
 * machine), and both need theirs before the page is handed out: one session costs that once.
 * A hook's hold is never released (it lasts the page's life); the restore's is, at the save.
 */
export async function holdPageCdp(page: Page): Promise<PageCdpHold> {
  let shared = sessions.get(page);
  if (!shared) {
    const made = { session: page.context().newCDPSession(page), holds: 0 };
    sessions.set(page, made);
    made.session.catch(() => {
      if (sessions.get(page) === made) sessions.delete(page);
    });
    shared = made;
  }
  const mine = shared;
  mine.holds += 1;
  let session: CDPSession;
  try {
    session = await mine.session;
  } catch (error) {
    mine.holds -= 1;
    throw error;
  }
  const listeners: Array<[string, (params: never) => void]> = [];
  let released = false;
  return {
    send: (method, params) => session.send(method as never, params as never),
    on(event, handler) {
      listeners.push([event, handler]);
      return session.on(event as never, handler as never);
    },
    async detach() {
      if (released) return;
      released = true;
      for (const [event, handler] of listeners) session.off(event as never, handler as never);
      mine.holds -= 1;
      if (mine.holds > 0) return;
      if (sessions.get(page) === mine) sessions.delete(page);
      await session.detach();
    },
  };
}
