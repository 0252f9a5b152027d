import { CdpMux } from "../../lambdas/runner/drivers/cdpMux";
import { fakePipe } from "../helpers/fakeCdpPipe";
import { HOLD_MAX_MS, type OpenedPage } from "../../lambdas/runner/drivers/openedPageGate";


/** As puppeteer writes its commands: `sessionId` last. */
const puppeteerSends = (mux: CdpMux, id: number, method: string, sessionId: string) => mux.root.send(JSON.stringify({ method, params: {}, id, sessionId }));
const methodsOn = (sent: Record<string, unknown>[], sessionId: string) => sent.filter((message) => message.sessionId === sessionId).map((message) => message.method);
const tabAttached = (sessionId: string) => ({ method: "Target.attachedToTarget", params: { sessionId, targetInfo: { targetId: `T-${sessionId}`, type: "tab" }, waitingForDebugger: true } });
const pageInTab = (tab: string, sessionId: string, targetId: string, openerId?: string) => ({
  method: "Target.attachedToTarget",
  params: { sessionId, targetInfo: { targetId, type: "page", ...(openerId ? { openerId } : {}) }, waitingForDebugger: false },
  sessionId: tab,
});

function deferred() {
  let resolve = () => {};
  const promise = new Promise<void>((done) => (resolve = done));
  return { promise, resolve };
}

async function connected(mux: CdpMux, pipe: ReturnType<typeof fakePipe>["pipe"], sent: Record<string, unknown>[], session: string, gated = true) {
  const opening = mux.openConnection({ gated });
  pipe.say({ id: (sent.at(-1) as { id: number }).id, result: { sessionId: session } });
  return opening;
}

describe("OpenedPageGate: the pages a run's pages open are held on the drivers' own connections", () => {
  it("puppeteer (a tab, then its page): holds the tab's let-go, and all after it, until the hook's promise settles; the tab's other commands pass", async () => {
    const { pipe, sent } = fakePipe();
    const mux = new CdpMux(pipe);
    const root: string[] = [];
    mux.root.onmessage = (text) => root.push(text);
    const asked: OpenedPage[] = [];
    const recorded = deferred();
    mux.holdOpenedPages((page) => {
      asked.push(page);
      return recorded.promise;
    });

    pipe.say(tabAttached("TAB1"));
    puppeteerSends(mux, 26, "Target.setAutoAttach", "TAB1");
    puppeteerSends(mux, 27, "Runtime.runIfWaitingForDebugger", "TAB1");
    puppeteerSends(mux, 28, "Page.enable", "TAB1");
    expect(methodsOn(sent, "TAB1")).toEqual(["Target.setAutoAttach"]);
    pipe.say(pageInTab("TAB1", "P1", "POPUP", "OPENER"));
    expect(asked).toEqual([{ targetId: "POPUP", openerId: "OPENER" }]);
    // The driver heard everything, unchanged and in order.
    expect(root.map((text) => (JSON.parse(text) as { params: { sessionId: string } }).params.sessionId)).toEqual(["TAB1", "P1"]);
    await new Promise((resolve) => setImmediate(resolve));
    expect(methodsOn(sent, "TAB1")).toEqual(["Target.setAutoAttach"]);

    recorded.resolve();
    await new Promise((resolve) => setImmediate(resolve));
    expect(methodsOn(sent, "TAB1")).toEqual(["Target.setAutoAttach", "Runtime.runIfWaitingForDebugger", "Page.enable"]);
    puppeteerSends(mux, 29, "Page.disable", "TAB1");
    expect(methodsOn(sent, "TAB1").at(-1)).toBe("Page.disable");
  });

  it("lets a tab go at once when its page was opened by no page, or when the tab answers before its page is known; asks no hook", () => {
    const { pipe, sent } = fakePipe();
    const mux = new CdpMux(pipe);
    const hook = jest.fn(() => new Promise<void>(() => {}));
    mux.holdOpenedPages(hook);

    pipe.say(tabAttached("TAB1"));
    puppeteerSends(mux, 1, "Runtime.runIfWaitingForDebugger", "TAB1");
    expect(methodsOn(sent, "TAB1")).toEqual([]);
    pipe.say(pageInTab("TAB1", "P1", "NEWPAGE"));
    expect(methodsOn(sent, "TAB1")).toEqual(["Runtime.runIfWaitingForDebugger"]);

    pipe.say(tabAttached("TAB2"));
    puppeteerSends(mux, 2, "Runtime.runIfWaitingForDebugger", "TAB2");
    pipe.say({ id: 2, result: {}, sessionId: "TAB2" });
    expect(methodsOn(sent, "TAB2")).toEqual(["Runtime.runIfWaitingForDebugger"]);
    expect(hook).not.toHaveBeenCalled();
  });

  it("Playwright (a page held on its connection): holds its page session from its let-go on; a page both drivers attach asks the hook once; the runner's own connection is never held", async () => {
    const { pipe, sent } = fakePipe();
    const mux = new CdpMux(pipe);
    mux.root.onmessage = () => {};
    const recorded = deferred();
    const hook = jest.fn((page: OpenedPage) => (page.openerId === "OPENER" ? recorded.promise : undefined));
    mux.holdOpenedPages(hook);
    const playwright = await connected(mux, pipe, sent, "B1");
    const own = await connected(mux, pipe, sent, "B2", false);
    const heard: object[] = [];
    playwright.onmessage = (message) => heard.push(message);
    own.onmessage = () => {};

    pipe.say({ method: "Target.attachedToTarget", params: { sessionId: "P1", targetInfo: { targetId: "POPUP", type: "page", openerId: "OPENER" }, waitingForDebugger: true }, sessionId: "B1" });
    playwright.send({ id: 1, method: "Page.enable", params: {}, sessionId: "P1" });
    playwright.send({ id: 2, method: "Runtime.runIfWaitingForDebugger", params: {}, sessionId: "P1" });
    playwright.send({ id: 3, method: "Runtime.evaluate", params: {}, sessionId: "P1" });
    expect(heard).toHaveLength(1);
    expect(methodsOn(sent, "P1")).toEqual(["Page.enable"]);
    // The same page through puppeteer's tab: held on the same promise, the hook asked once.
    pipe.say(tabAttached("TAB1"));
    pipe.say(pageInTab("TAB1", "P2", "POPUP", "OPENER"));
    puppeteerSends(mux, 7, "Runtime.runIfWaitingForDebugger", "TAB1");
    // The runner's own session on that page is never held.
    pipe.say({ method: "Target.attachedToTarget", params: { sessionId: "P3", targetInfo: { targetId: "POPUP", type: "page", openerId: "OPENER" }, waitingForDebugger: true }, sessionId: "B2" });
    own.send({ id: 1, method: "Runtime.runIfWaitingForDebugger", params: {}, sessionId: "P3" });
    expect(methodsOn(sent, "P3")).toEqual(["Runtime.runIfWaitingForDebugger"]);
    expect(hook).toHaveBeenCalledTimes(1);

    recorded.resolve();
    await new Promise((resolve) => setImmediate(resolve));
    expect(methodsOn(sent, "P1")).toEqual(["Page.enable", "Runtime.runIfWaitingForDebugger", "Runtime.evaluate"]);
    expect(methodsOn(sent, "TAB1")).toEqual(["Runtime.runIfWaitingForDebugger"]);

    // A page opened by a page the hook does not hold for goes at once.
    pipe.say({ method: "Target.attachedToTarget", params: { sessionId: "P4", targetInfo: { targetId: "OTHER", type: "page", openerId: "ELSE" }, waitingForDebugger: true }, sessionId: "B1" });
    playwright.send({ id: 4, method: "Runtime.runIfWaitingForDebugger", params: {}, sessionId: "P4" });
    expect(methodsOn(sent, "P4")).toEqual(["Runtime.runIfWaitingForDebugger"]);
  });

  it("holds nothing without a hook, or once it is removed; a hook that never settles holds a page HOLD_MAX_MS at most", async () => {
    jest.useFakeTimers();
    try {
      const { pipe, sent } = fakePipe();
      const mux = new CdpMux(pipe);
      mux.root.onmessage = () => {};
      pipe.say(tabAttached("TAB1"));
      puppeteerSends(mux, 1, "Runtime.runIfWaitingForDebugger", "TAB1");
      expect(methodsOn(sent, "TAB1")).toEqual(["Runtime.runIfWaitingForDebugger"]);

      const remove = mux.holdOpenedPages(() => new Promise<void>(() => {}));
      pipe.say(tabAttached("TAB2"));
      pipe.say(pageInTab("TAB2", "P2", "POPUP", "OPENER"));
      puppeteerSends(mux, 2, "Runtime.runIfWaitingForDebugger", "TAB2");
      await jest.advanceTimersByTimeAsync(HOLD_MAX_MS - 1);
      expect(methodsOn(sent, "TAB2")).toEqual([]);
      await jest.advanceTimersByTimeAsync(1);
      expect(methodsOn(sent, "TAB2")).toEqual(["Runtime.runIfWaitingForDebugger"]);

      remove();
      pipe.say(tabAttached("TAB3"));
      puppeteerSends(mux, 3, "Runtime.runIfWaitingForDebugger", "TAB3");
      expect(methodsOn(sent, "TAB3")).toEqual(["Runtime.runIfWaitingForDebugger"]);
    } finally {
      jest.useRealTimers();
    }
  });
});
