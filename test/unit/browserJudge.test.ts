import { BrowserJudge } from "../../lambdas/runner/browserReuse/browserJudge";
import { endedUnfit } from "../../lambdas/runner/browserReuse/resetKeptBrowser";

const send = (judge: BrowserJudge, command: object) => judge.command(JSON.stringify(command));

/** A judge that saw the run create context C1 and attach page session P1 in it, and browser session B1. */
function runWithContext(): BrowserJudge {
  const judge = new BrowserJudge();
  send(judge, { id: 1, method: "Target.createBrowserContext", params: { disposeOnDetach: true } });
  judge.message('{"id":1,"result":{"browserContextId":"C1"}}');
  judge.message(JSON.stringify({ method: "Target.attachedToTarget", params: { sessionId: "P1", targetInfo: { type: "page", browserContextId: "C1" } } }));
  send(judge, { id: 2, method: "Target.attachToBrowserTarget", params: {} });
  judge.message(JSON.stringify({ method: "Target.attachedToTarget", params: { sessionId: "B1", targetInfo: { type: "browser" } } }));
  judge.message('{"id":2,"result":{"sessionId":"B1"}}');
  return judge;
}

describe("BrowserJudge", () => {
  it("lets the drivers' own browser-level commands through, on the run's own contexts", () => {
    const judge = runWithContext();
    send(judge, { id: 3, method: "Target.setDiscoverTargets", params: { discover: true } });
    send(judge, { id: 4, method: "Target.setAutoAttach", params: { autoAttach: true, flatten: true }, sessionId: "B1" });
    send(judge, { id: 5, method: "Target.createTarget", params: { url: "about:blank", browserContextId: "C1" } });
    send(judge, { id: 6, method: "Browser.setDownloadBehavior", params: { behavior: "allowAndName", browserContextId: "C1", downloadPath: "/d" }, sessionId: "B1" });
    send(judge, { id: 7, method: "Storage.setCookies", params: { cookies: [], browserContextId: "C1" } });
    send(judge, { id: 8, method: "Browser.grantPermissions", params: { permissions: ["geolocation"], browserContextId: "C1" } });
    send(judge, { id: 9, method: "Target.disposeBrowserContext", params: { browserContextId: "C1" } });
    // Page sessions act on their page (closed at the reset): anything goes there.
    send(judge, { id: 10, method: "Runtime.evaluate", params: { expression: "1" }, sessionId: "P1" });
    send(judge, { id: 11, method: "Network.setCookie", params: { name: "a", value: "b" }, sessionId: "P1" });
    expect(judge.tainted).toBeUndefined();
    expect([...judge.contexts]).toEqual(["C1"]);
    expect([...judge.sessions].sort()).toEqual(["B1", "P1"]);
  });

  it.each([
    ["a page of the default context", { id: 3, method: "Target.createTarget", params: { url: "about:blank" } }],
    ["a page of a context the run did not make", { id: 3, method: "Target.createTarget", params: { url: "about:blank", browserContextId: "DEFAULT" } }],
    ["a cookie of the default context", { id: 3, method: "Storage.setCookies", params: { cookies: [] } }],
    ["a cookie of the default context, from a page's session", { id: 3, method: "Storage.setCookies", params: { cookies: [] }, sessionId: "P1" }],
    ["a permission without a context", { id: 3, method: "Browser.grantPermissions", params: { permissions: ["geolocation"] } }],
    ["exposeDevToolsProtocol", { id: 3, method: "Target.exposeDevToolsProtocol", params: { targetId: "T", bindingName: "cdp" } }],
    ["Browser.close on a page's session", { id: 3, method: "Browser.close", sessionId: "P1" }],
    ["Browser.crash", { id: 3, method: "Browser.crash", sessionId: "B1" }],
    ["certificate errors ignored from a page's session", { id: 3, method: "Security.setIgnoreCertificateErrors", params: { ignore: true }, sessionId: "P1" }],
    ["an extension loaded from a page's session", { id: 3, method: "Extensions.loadUnpacked", params: { path: "/x" }, sessionId: "P1" }],
    ["an unknown browser-level method", { id: 3, method: "Network.clearBrowserCookies" }],
    // The security review of session 12: Storage's settings beyond cookies act on the profile, whichever session sends them.
    ["attribution reporting's testing mode from a page's session", { id: 3, method: "Storage.setAttributionReportingLocalTestingMode", params: { enabled: true }, sessionId: "P1" }],
    ["an origin's quota overridden from a page's session", { id: 3, method: "Storage.overrideQuotaForOrigin", params: { origin: "https://a.test", quotaSize: 1 }, sessionId: "P1" }],
    ["a virtual authenticator from a page's session", { id: 3, method: "WebAuthn.enable", params: {}, sessionId: "P1" }],
    ["a command on a session it never saw attached", { id: 3, method: "Runtime.evaluate", params: { expression: "1" }, sessionId: "UNKNOWN" }],
    ["a command without a method", { id: 3 }],
    ["disposing a context it did not make", { id: 3, method: "Target.disposeBrowserContext", params: { browserContextId: "OTHER" } }],
  ])("is tainted by %s", (_what, command) => {
    const judge = runWithContext();
    send(judge, command);
    expect(judge.tainted).toEqual(expect.any(String));
  });

  it("judges a command as the browser will read it: a key given twice is passed on once, as read", () => {
    const judge = runWithContext();
    const judged = judge.command('{"id":3,"method":"Target.getTargets","method":"Browser.close"}');
    expect(judged?.message).toBe('{"id":3,"method":"Browser.close"}');
    expect(judge.tainted).toContain("Browser.close");
  });

  it("is tainted when a target of another context (the default one's) is attached", () => {
    const judge = runWithContext();
    judge.message(JSON.stringify({ method: "Target.attachedToTarget", params: { sessionId: "P2", targetInfo: { type: "page", browserContextId: "DEFAULT" } } }));
    expect(judge.tainted).toContain("outside the run's own contexts");
  });

  it("forgets the run's sessions and contexts after the reset", () => {
    const judge = runWithContext();
    judge.clearRun();
    send(judge, { id: 3, method: "Target.createTarget", params: { url: "about:blank", browserContextId: "C1" } });
    expect(judge.tainted).toContain("outside the run's own contexts");
    expect(judge.sessions.size).toBe(0);
  });

  it("refuses text that is no command", () => {
    expect(new BrowserJudge().command("not json")).toBeUndefined();
    expect(new BrowserJudge().command("[1]")).toBeUndefined();
  });
});

describe("endedUnfit", () => {
  it("keeps the browser of a run that ended on its own, not of one stopped or refused", () => {
    expect(endedUnfit({ status: "succeeded" })).toBeUndefined();
    expect(endedUnfit({ status: "failed", error: { code: "function_error" } })).toBeUndefined();
    expect(endedUnfit({ status: "failed", error: { code: "result_too_deep" } })).toBeUndefined();
    expect(endedUnfit({ status: "failed", error: { code: "function_timeout" } })).toContain("function_timeout");
    expect(endedUnfit({ status: "failed", error: { code: "out_of_memory" } })).toContain("out_of_memory");
    expect(endedUnfit({ status: "failed", error: { code: "insufficient_memory" } })).toContain("insufficient_memory");
    expect(endedUnfit(undefined)).toEqual(expect.any(String));
  });
});
