import { keepDownloadsIn } from "../../lambdas/runner/cdpDownloads";

const DOWNLOADS = "/tmp/browserfn-runtime-x/profile-1/Downloads";
const command = (method: string, params: Record<string, unknown> = {}, sessionId?: string) =>
  JSON.stringify({ id: 7, method, params, ...(sessionId ? { sessionId } : {}) });
const passed = (text: string): unknown => {
  const verdict = keepDownloadsIn(text, DOWNLOADS);
  if (!verdict.ok) throw new Error(verdict.reason);
  return JSON.parse(verdict.message);
};

describe("the runtime's downloads folder, in both sandboxes", () => {
  it("passes ordinary commands unchanged, byte for byte, escaped characters and all", () => {
    for (const text of [command("Page.navigate", { url: "https://example.com/" }), command("Runtime.evaluate", { expression: "1+1" }, "S1")]) {
      expect(keepDownloadsIn(text, DOWNLOADS)).toEqual({ ok: true, message: text });
    }
    const escaped = command("Runtime.evaluate", { expression: 'say("a\\nb")' });
    expect(keepDownloadsIn(escaped, DOWNLOADS)).toEqual({ ok: true, message: escaped });
  });

  it("saves every download in the run's folder, whatever path it asks for, on either method", () => {
    for (const downloadPath of ["/tmp", "/dev/shm", "/tmp/browserfn-runtime-x", `${DOWNLOADS}/../..`, "relative", DOWNLOADS]) {
      for (const behavior of ["allow", "allowAndName"]) {
        expect(passed(command("Browser.setDownloadBehavior", { behavior, downloadPath, browserContextId: "C1", eventsEnabled: true }, "S3"))).toEqual({
          id: 7,
          sessionId: "S3",
          method: "Browser.setDownloadBehavior",
          params: { behavior, downloadPath: DOWNLOADS, browserContextId: "C1", eventsEnabled: true },
        });
        expect(passed(command("Page.setDownloadBehavior", { behavior, downloadPath }))).toEqual({
          id: 7,
          method: "Page.setDownloadBehavior",
          params: { behavior, downloadPath: DOWNLOADS },
        });
      }
    }
    // No path at all: the folder still.
    expect(passed(command("Browser.setDownloadBehavior", { behavior: "allow" }))).toEqual({ id: 7, method: "Browser.setDownloadBehavior", params: { behavior: "allow", downloadPath: DOWNLOADS } });
  });

  it("keeps only the fields it knows, and no path where nothing is saved", () => {
    expect(passed(command("Browser.setDownloadBehavior", { behavior: "deny", downloadPath: "/tmp", extra: { a: 1 }, browserContextId: 5 }))).toEqual({
      id: 7,
      method: "Browser.setDownloadBehavior",
      params: { behavior: "deny" },
    });
    expect(passed(command("Browser.setDownloadBehavior", { behavior: "default", downloadPath: "/dev/shm" }))).toEqual({ id: 7, method: "Browser.setDownloadBehavior", params: { behavior: "default" } });
    expect(keepDownloadsIn(command("Browser.setDownloadBehavior", { behavior: "everywhere", downloadPath: "/tmp" }), DOWNLOADS).ok).toBe(false);
    expect(keepDownloadsIn(command("Browser.setDownloadBehavior", {}), DOWNLOADS).ok).toBe(false);
  });

  it("reads the method however it is spelled: escaped, or one key twice", () => {
    const escaped = '{"id":7,"method":"Browser.setDownload\\u0042ehavior","params":{"behavior":"allow","downloadPath":"/tmp"}}';
    expect(passed(escaped)).toEqual({ id: 7, method: "Browser.setDownloadBehavior", params: { behavior: "allow", downloadPath: DOWNLOADS } });
    const twice = '{"id":7,"method":"Browser.setDownloadBehavior","params":{"behavior":"allow","downloadPath":"/tmp"},"method":"Runtime.evaluate"}';
    // Passed on as read (one method), never as sent.
    expect(passed(twice)).toEqual({ id: 7, method: "Runtime.evaluate", params: { behavior: "allow", downloadPath: "/tmp" } });
    const twiceOther = '{"id":7,"method":"Runtime.evaluate","params":{"behavior":"allow","downloadPath":"/tmp"},"method":"Browser.setDownloadBehavior"}';
    expect(passed(twiceOther)).toEqual({ id: 7, method: "Browser.setDownloadBehavior", params: { behavior: "allow", downloadPath: DOWNLOADS } });
  });

  it("refuses a command wrapped in another, which would pass unread", () => {
    const inner = command("Browser.setDownloadBehavior", { behavior: "allow", downloadPath: "/tmp" });
    expect(keepDownloadsIn(command("Target.sendMessageToTarget", { sessionId: "S1", message: inner }, "S0"), DOWNLOADS)).toEqual({
      ok: false,
      id: 7,
      sessionId: "S0",
      reason: "browserfn refused Target.sendMessageToTarget: commands go to their session directly (flat sessions), not wrapped in another",
    });
  });

  it("refuses what is not a command", () => {
    expect(keepDownloadsIn("[1,\\u0032]", DOWNLOADS)).toEqual({ ok: false, id: undefined, sessionId: undefined, reason: "not a CDP command" });
    expect(keepDownloadsIn("not json DownloadBehavior", DOWNLOADS).ok).toBe(false);
  });
});
