import { CdpMux } from "../../lambdas/runner/drivers/cdpMux";
import { fakePipe } from "../helpers/fakeCdpPipe";


describe("CdpMux: one CDP pipe, two drivers", () => {
  it("gives a connection its own browser session, stamps and strips its id, and routes what it attaches to it alone", async () => {
    const { pipe, sent } = fakePipe();
    const mux = new CdpMux(pipe);
    const root: string[] = [];
    mux.root.onmessage = (text) => root.push(text);

    const opening = mux.openConnection();
    const attach = sent.at(-1) as { id: number; method: string };
    expect(attach.method).toBe("Target.attachToBrowserTarget");
    // Chromium tells the root of the new browser session first: the root's client never hears of it.
    pipe.say({ method: "Target.attachedToTarget", params: { sessionId: "B1", targetInfo: { type: "browser", targetId: "T0" }, waitingForDebugger: false } });
    pipe.say({ id: attach.id, result: { sessionId: "B1" } });
    const connection = await opening;
    const heard: object[] = [];
    connection.onmessage = (message) => heard.push(message);

    connection.send({ id: 1, method: "Target.setAutoAttach", params: { autoAttach: true, flatten: true } });
    expect(sent.at(-1)).toEqual({ id: 1, method: "Target.setAutoAttach", params: { autoAttach: true, flatten: true }, sessionId: "B1" });
    mux.root.send(JSON.stringify({ id: 1, method: "Browser.getVersion" }));
    expect(sent.at(-1)).toEqual({ id: 1, method: "Browser.getVersion" });

    pipe.say({ id: 1, result: {}, sessionId: "B1" });
    pipe.say({ id: 1, result: { product: "Chrome" } });
    pipe.say({ method: "Target.attachedToTarget", params: { sessionId: "P1", targetInfo: { type: "page" } }, sessionId: "B1" });
    pipe.say({ method: "Page.loadEventFired", params: { timestamp: 1 }, sessionId: "P1" });
    pipe.say({ method: "Page.loadEventFired", params: { timestamp: 2 }, sessionId: "P9" }); // the root's own page session

    expect(heard).toEqual([
      { id: 1, result: {} },
      { method: "Target.attachedToTarget", params: { sessionId: "P1", targetInfo: { type: "page" } } },
      { method: "Page.loadEventFired", params: { timestamp: 1 }, sessionId: "P1" },
    ]);
    // The root's own browser-target session (puppeteer's, for downloads) is news it must hear.
    pipe.say({ method: "Target.attachedToTarget", params: { sessionId: "R1", targetInfo: { type: "browser", targetId: "T0" }, waitingForDebugger: false } });
    expect(root.map((text) => JSON.parse(text) as { method?: string; id?: number; params?: { sessionId?: string } })).toEqual([
      { id: 1, result: { product: "Chrome" } },
      { method: "Page.loadEventFired", params: { timestamp: 2 }, sessionId: "P9" },
      { method: "Target.attachedToTarget", params: { sessionId: "R1", targetInfo: { type: "browser", targetId: "T0" }, waitingForDebugger: false } },
    ]);

    // Its close detaches its browser session only; the pipe and the root stay.
    let closed = false;
    connection.onclose = () => (closed = true);
    connection.close();
    expect(closed).toBe(true);
    expect(sent.at(-1)).toEqual({ id: expect.any(Number), method: "Target.detachFromTarget", params: { sessionId: "B1" } });
    pipe.say({ method: "Page.loadEventFired", params: { timestamp: 3 }, sessionId: "P1" });
    expect(heard).toHaveLength(3);
  });

  it("closes every connection and the root when the pipe closes", async () => {
    const { pipe, sent } = fakePipe();
    const mux = new CdpMux(pipe);
    const opening = mux.openConnection();
    pipe.say({ id: (sent.at(-1) as { id: number }).id, result: { sessionId: "B2" } });
    const connection = await opening;
    const closed: string[] = [];
    connection.onclose = () => closed.push("connection");
    mux.root.onclose = () => closed.push("root");
    pipe.close();
    expect(closed).toEqual(["connection", "root"]);
    await expect(mux.openConnection()).rejects.toThrow("The browser's connection is closed");
  });
});
