import { pendingUserTimers, userTimers } from "../../lambdas/runner/userTimers";

/** Resolves after the real event loop has had `ms` to run (a timer of our own, not counted). */
const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

// The module keeps one set of pending timers: every test starts and must end with none.
beforeEach(() => {
  expect(pendingUserTimers()).toBe(0);
});
afterEach(() => {
  expect(pendingUserTimers()).toBe(0);
});

describe("userTimers.setTimeout", () => {
  it("counts a pending timeout as 1 until it fires, then 0, and passes its arguments", async () => {
    const fired = new Promise<{ args: unknown[]; pendingInside: number }>((resolve) => {
      userTimers.setTimeout((...args) => resolve({ args, pendingInside: pendingUserTimers() }), 5, "a", 2);
    });
    expect(pendingUserTimers()).toBe(1);
    const { args, pendingInside } = await fired;
    expect(args).toEqual(["a", 2]);
    expect(pendingInside).toBe(0);
    expect(pendingUserTimers()).toBe(0);
  });

  it("counts each pending timeout", () => {
    const first = userTimers.setTimeout(() => undefined, 60_000);
    const second = userTimers.setTimeout(() => undefined, 60_000);
    try {
      expect(pendingUserTimers()).toBe(2);
      userTimers.clearTimeout(first);
      expect(pendingUserTimers()).toBe(1);
    } finally {
      userTimers.clearTimeout(first);
      userTimers.clearTimeout(second);
    }
    expect(pendingUserTimers()).toBe(0);
  });

  it("stops counting a timeout cleared with clearTimeout, which then never fires", async () => {
    let calls = 0;
    const handle = userTimers.setTimeout(() => calls++, 1);
    expect(pendingUserTimers()).toBe(1);
    userTimers.clearTimeout(handle);
    expect(pendingUserTimers()).toBe(0);
    await sleep(20);
    expect(calls).toBe(0);
  });

  it("ignores clearTimeout of nothing or of a timer it does not know", () => {
    const foreign = setTimeout(() => undefined, 60_000);
    try {
      userTimers.clearTimeout(undefined);
      userTimers.clearTimeout(foreign);
      expect(pendingUserTimers()).toBe(0);
    } finally {
      clearTimeout(foreign);
    }
  });

  it("counts an unref'd timeout too: it still fires later in the process's life", () => {
    const handle = userTimers.setTimeout(() => undefined, 60_000);
    try {
      handle.unref();
      expect(pendingUserTimers()).toBe(1);
      handle.ref();
      expect(pendingUserTimers()).toBe(1);
    } finally {
      userTimers.clearTimeout(handle);
    }
  });
});

describe("userTimers.setInterval", () => {
  it("counts an interval while it keeps firing, until clearInterval", async () => {
    let ticks = 0;
    let handle: NodeJS.Timeout | undefined;
    try {
      const twice = new Promise<void>((resolve) => {
        handle = userTimers.setInterval(() => {
          ticks++;
          if (ticks === 2) resolve();
        }, 1);
      });
      expect(pendingUserTimers()).toBe(1);
      await twice;
      expect(pendingUserTimers()).toBe(1);
    } finally {
      userTimers.clearInterval(handle);
    }
    expect(pendingUserTimers()).toBe(0);
    const ticksAtClear = ticks;
    await sleep(20);
    expect(ticks).toBe(ticksAtClear);
  });

  it("counts an unref'd interval", () => {
    const handle = userTimers.setInterval(() => undefined, 60_000);
    try {
      handle.unref();
      expect(pendingUserTimers()).toBe(1);
    } finally {
      userTimers.clearInterval(handle);
    }
  });
});

describe("userTimers.setImmediate", () => {
  it("counts an immediate until it runs, and passes its arguments", async () => {
    const ran = new Promise<{ args: unknown[]; pendingInside: number }>((resolve) => {
      userTimers.setImmediate((...args) => resolve({ args, pendingInside: pendingUserTimers() }), "x");
    });
    expect(pendingUserTimers()).toBe(1);
    const { args, pendingInside } = await ran;
    expect(args).toEqual(["x"]);
    expect(pendingInside).toBe(0);
    expect(pendingUserTimers()).toBe(0);
  });

  it("stops counting an immediate cleared with clearImmediate, which then never runs", async () => {
    let calls = 0;
    const handle = userTimers.setImmediate(() => calls++);
    expect(pendingUserTimers()).toBe(1);
    userTimers.clearImmediate(handle);
    expect(pendingUserTimers()).toBe(0);
    await sleep(5);
    expect(calls).toBe(0);
  });

  it("counts an unref'd immediate", () => {
    const handle = userTimers.setImmediate(() => undefined);
    try {
      handle.unref();
      expect(pendingUserTimers()).toBe(1);
    } finally {
      userTimers.clearImmediate(handle);
    }
  });
});
