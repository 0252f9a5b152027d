import { EventEmitter } from "node:events";
import type { Page } from "playwright-core";
import { holdPageCdp } from "../../layers/runtime/drivers/sharedPageCdp";

/** A Playwright page as holdPageCdp sees it: newCDPSession counted, its sessions' commands and detaches recorded. */
function fakePage(failFirst = false) {
  const made: Array<EventEmitter & { sent: string[]; detached: boolean }> = [];
  let calls = 0;
  const page = {
    context: () => ({
      newCDPSession: async () => {
        calls += 1;
        if (failFirst && calls === 1) throw new Error("target closed");
        const session = Object.assign(new EventEmitter(), { sent: [] as string[], detached: false });
        Object.assign(session, {
          send: async (method: string) => void session.sent.push(method),
          detach: async () => void (session.detached = true),
        });
        made.push(session);
        return session;
      },
    }),
  } as unknown as Page;
  return { page, made, calls: () => calls };
}

it("opens one session per page for every hold, and detaches it once the last hold is released", async () => {
  const { page, made, calls } = fakePage();
  const [restore, hooks] = await Promise.all([holdPageCdp(page), holdPageCdp(page)]);
  expect(calls()).toBe(1);
  await restore.send("Runtime.enable");
  await hooks.send("Page.enable");
  expect(made[0]?.sent).toEqual(["Runtime.enable", "Page.enable"]);
  await restore.detach();
  expect(made[0]?.detached).toBe(false);
  await restore.detach(); // twice counts once
  expect(made[0]?.detached).toBe(false);
  await hooks.detach();
  expect(made[0]?.detached).toBe(true);
  // Once detached, a new hold opens a new session.
  await holdPageCdp(page);
  expect(calls()).toBe(2);
});

it("takes a released hold's listeners off the shared session, and leaves the others'", async () => {
  const { page, made } = fakePage();
  const restore = await holdPageCdp(page);
  const hooks = await holdPageCdp(page);
  const heard: string[] = [];
  restore.on("Runtime.bindingCalled", () => heard.push("restore"));
  hooks.on("Runtime.bindingCalled", () => heard.push("hooks"));
  made[0]?.emit("Runtime.bindingCalled", {});
  await restore.detach();
  made[0]?.emit("Runtime.bindingCalled", {});
  expect(heard).toEqual(["restore", "hooks", "hooks"]);
});

it("a session that failed to open is not kept: the next hold opens another", async () => {
  const { page, calls } = fakePage(true);
  await expect(holdPageCdp(page)).rejects.toThrow("target closed");
  await holdPageCdp(page);
  expect(calls()).toBe(2);
});
