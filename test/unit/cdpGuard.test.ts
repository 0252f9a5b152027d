import { guardCommand, isLocalUrl } from "../../lambdas/runner/cdpGuard";

const command = (method: string, params: Record<string, unknown> = {}, sessionId?: string) =>
  JSON.stringify({ id: 7, method, params, ...(sessionId ? { sessionId } : {}) });

describe("the process sandbox's CDP guard", () => {
  it("passes ordinary commands unchanged, byte for byte", () => {
    for (const text of [command("Page.navigate", { url: "https://example.com/" }), command("Runtime.evaluate", { expression: "1+1" }, "S1")]) {
      expect(guardCommand(text)).toEqual({ ok: true, message: text });
    }
  });

  it("refuses local-file URLs in any parameter, however they are spelled", () => {
    const urls = ["file:///etc/passwd", "FILE:///x", " \tfile:/x", "view-source:file:///x", "filesystem:http://a/temporary/x", "fi\nle:///x"];
    for (const url of urls) {
      expect(isLocalUrl(url)).toBe(true);
      for (const method of ["Page.navigate", "Target.createTarget", "Network.loadNetworkResource", "Fetch.continueRequest"]) {
        const verdict = guardCommand(command(method, { url }, "S2"));
        expect(verdict).toEqual({ ok: false, id: 7, sessionId: "S2", reason: `browserfn refused ${method}: local files (file: URLs) are not available to automations` });
      }
    }
    expect(isLocalUrl("https://example.com/file:///x")).toBe(false);
  });

  it("refuses file inputs and dropped files, which read local paths", () => {
    expect(guardCommand(command("DOM.setFileInputFiles", { files: ["/etc/passwd"], nodeId: 1 }))).toEqual({
      ok: false,
      id: 7,
      sessionId: undefined,
      reason: "browserfn refused DOM.setFileInputFiles: local files are not available to automations",
    });
    expect(guardCommand(command("DOM.setFileInputFiles", { files: ["/etc/passwd"], nodeId: 1 })).ok).toBe(false);
    expect(guardCommand(command("Input.dispatchDragEvent", { type: "drop", x: 1, y: 1, data: { items: [], files: ["/etc/passwd"] } })).ok).toBe(false);
    expect(guardCommand(command("Input.dispatchDragEvent", { type: "dragEnter", x: 1, y: 1, data: { items: [] } })).ok).toBe(true);
  });

  it("refuses what is not a command", () => {
    expect(guardCommand("not json")).toEqual({ ok: false, id: undefined, sessionId: undefined, reason: "not a CDP command" });
    expect(guardCommand(JSON.stringify({ id: 1 })).ok).toBe(false);
  });
});
