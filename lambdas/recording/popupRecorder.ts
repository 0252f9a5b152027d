/**
 * Records the pages a run's recorded pages open (`window.open`, links with `target=_blank`,
 * forms), whichever driver drives them. The drivers hold each new page before it loads anything
 * (their own auto-attach); the drivers' pipe keeps it held (OpenedPageGate) while this side, on
 * a connection of its own opened at the first such page, attaches to it and sends its
 * recorder's commands; then the drivers let it go. A page opened by a page that is not recorded
 * is not held. A run that opens no popup opens no connection and sends nothing for popups.
 */
import type { OpenedPages } from "../runner/drivers/openedPageGate";
import { CdpConnection } from "./cdpConnection";
import type { PageTarget } from "./pageTarget";

export interface PopupRecorder {
  /** Says that the page `targetId` is recorded: the pages it opens are recorded too. */
  recorded(targetId: string): void;
  /** Stops: no page is held any more, and the connection (if one was opened) is closed. */
  close(): void;
}

type Detached = { sessionId?: unknown };
type Navigated = { frame?: { parentId?: unknown; url?: unknown } };

/** Hands each page a recorded page opens to `onPopup` (which records it, true once its recorder is in place), before it loads anything. */
export function recordPopups(pages: OpenedPages, onPopup: (page: PageTarget) => Promise<boolean>): PopupRecorder {
  const recorded = new Set<string>();
  const closed = new Set<string>();
  let connection: Promise<CdpConnection> | undefined;
  let ended = false;
  const connect = () =>
    (connection ??= pages.openConnection().then((transport) => {
      const made = new CdpConnection(transport);
      made.on("Target.detachedFromTarget", (event: Detached) => {
        if (typeof event?.sessionId !== "string") return;
        closed.add(event.sessionId);
        made.forget(event.sessionId);
      });
      if (ended) made.close();
      return made;
    }));
  /** Attaches to the held page `targetId` and records it; resolves once its recorder's commands are sent (or it is not recorded). */
  const popup = async (targetId: string): Promise<void> => {
    const cdp = await connect();
    const attached = (await cdp.send("Target.attachToTarget", { targetId, flatten: true })) as { sessionId?: unknown };
    const sessionId = attached?.sessionId;
    if (typeof sessionId !== "string") return;
    let url = "about:blank";
    const channel = cdp.channel(sessionId);
    channel.on("Page.frameNavigated", (navigated: Navigated) => {
      if (navigated?.frame && navigated.frame.parentId === undefined && typeof navigated.frame.url === "string") url = navigated.frame.url;
    });
    let sent = () => {};
    const commandsSent = new Promise<void>((resolve) => (sent = resolve));
    const page: PageTarget = { cdp: async () => channel, url: () => url, closed: () => closed.has(sessionId), commandsSent: () => sent() };
    void onPopup(page)
      .catch(() => false)
      .finally(() => sent());
    await commandsSent;
  };
  const remove = pages.hold(({ targetId, openerId }) => (!ended && recorded.has(openerId) ? popup(targetId) : undefined));
  return {
    recorded: (targetId) => void recorded.add(targetId),
    close() {
      ended = true;
      remove();
      void connection?.then((made) => made.close(), () => undefined);
    },
  };
}
