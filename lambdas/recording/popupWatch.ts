/**
 * Finds the pages a run's recorded pages open (`window.open`, links with `target=_blank`,
 * forms), whichever driver drives them: a connection of the runner's own to the browser
 * auto-attaches to every new page, which Chromium then holds before it loads anything. A page
 * opened by a recorded page (its `openerId`) is handed to `onPopup` to be recorded, and let go
 * once its recorder is in place; any other page is let go and left at once.
 */
import type { ObjectTransport } from "../runner/drivers/cdpMux";
import { CdpConnection } from "./cdpConnection";
import type { PageTarget } from "./pageTarget";

type TargetInfo = { targetId?: unknown; type?: unknown; openerId?: unknown; url?: unknown };
type Attached = { sessionId?: unknown; targetInfo?: TargetInfo; waitingForDebugger?: unknown };
type Detached = { sessionId?: unknown };

export interface PopupWatch {
  /** Says that the page `targetId` is recorded: the pages it opens are recorded too. */
  recorded(targetId: string): void;
  close(): void;
}

/**
 * Starts watching on a connection `open` opens. `onPopup` records a page opened by a recorded
 * page and answers its target id once recording it (or undefined when it is not recorded).
 */
export async function watchPopups(open: () => Promise<ObjectTransport>, onPopup: (page: PageTarget) => Promise<boolean>): Promise<PopupWatch> {
  const connection = new CdpConnection(await open());
  const recorded = new Set<string>();
  const closed = new Set<string>();
  connection.on("Target.attachedToTarget", (event: Attached) => {
    const sessionId = event?.sessionId;
    const info = event?.targetInfo;
    if (typeof sessionId !== "string" || !info) return;
    let released: Promise<unknown> | undefined;
    const release = () => (released ??= event.waitingForDebugger === true ? connection.send("Runtime.runIfWaitingForDebugger", {}, sessionId).catch(() => undefined) : Promise.resolve());
    const opener = typeof info.openerId === "string" ? info.openerId : undefined;
    if (info.type !== "page" || opener === undefined || !recorded.has(opener) || typeof info.targetId !== "string") {
      void release().then(() => connection.send("Target.detachFromTarget", { sessionId }).catch(() => undefined));
      return;
    }
    const targetId = info.targetId;
    let url = typeof info.url === "string" ? info.url : "";
    const channel = connection.channel(sessionId);
    channel.on("Page.frameNavigated", (navigated: { frame?: { parentId?: unknown; url?: unknown } }) => {
      if (navigated?.frame && navigated.frame.parentId === undefined && typeof navigated.frame.url === "string") url = navigated.frame.url;
    });
    const page: PageTarget = { cdp: async () => channel, url: () => url, closed: () => closed.has(sessionId), commandsSent: () => void release() };
    void onPopup(page)
      .then((kept) => {
        if (kept) recorded.add(targetId);
      }, () => undefined)
      .finally(() => void release());
  });
  connection.on("Target.detachedFromTarget", (event: Detached) => {
    if (typeof event?.sessionId !== "string") return;
    closed.add(event.sessionId);
    connection.forget(event.sessionId);
  });
  await connection.send("Target.setAutoAttach", { autoAttach: true, waitForDebuggerOnStart: true, flatten: true, filter: [{ type: "page", exclude: false }] });
  return {
    recorded: (targetId) => void recorded.add(targetId),
    close: () => connection.close(),
  };
}
