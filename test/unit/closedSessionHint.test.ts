import { explainClosedSession } from "../../lambdas/runner/closedSessionHint";

const HINT_START = "The browser call failed: the session was closed before this call finished — did the function return a promise without `await`";

describe("explainClosedSession", () => {
  it("puts the fix before a closed page's error, and before a destroyed context's only once a session has closed", () => {
    const closed = new Error("Protocol error (Runtime.callFunctionOn): Target closed");
    expect(explainClosedSession(closed, false)).toMatch(new RegExp(`^${HINT_START}.*Original error: Protocol error \\(Runtime\\.callFunctionOn\\): Target closed$`));
    const detached = new Error("Protocol error (DOM.describeNode): Session closed. Most likely the page has been closed.");
    expect(explainClosedSession(detached, false).startsWith(HINT_START)).toBe(true);
    // puppeteer wraps some failures: the cause says why.
    const wrapped = new Error("Waiting for selector `#x` failed", { cause: closed });
    expect(explainClosedSession(wrapped, false)).toMatch(/Original error: Waiting for selector `#x` failed$/);

    // A navigation destroys the context too: no hint unless a session of the run had closed.
    const destroyed = new Error("Execution context was destroyed, most likely because of a navigation.");
    expect(explainClosedSession(destroyed, false)).toBe(destroyed.message);
    expect(explainClosedSession(destroyed, true)).toBe(`${explainClosedSession(closed, false).split("Original error: ")[0]}Original error: ${destroyed.message}`);

    expect(explainClosedSession(new Error("Navigation timeout of 30000 ms exceeded"), true)).toBe("Navigation timeout of 30000 ms exceeded");
  });
});
