import type { Browser } from "puppeteer-core";
import type { RunOutcome } from "./protocol";

/** How long a failed run's answer waits for a disconnected browser's process to say how it ended. */
const EXIT_WAIT_MS = 1000;

/**
 * Watches the container's browsers for a kill nobody here asked for: a Chromium process ended by
 * SIGKILL that no `kill()` of this process sent. Inside a function's Lambda that is the
 * out-of-memory killer (nothing else may signal the runner's child), so a run that failed or
 * timed out after it ran out of memory, not out of time (issue #23, item 3).
 */
export function browserKillWatch() {
  let killedAt: number | undefined;
  const watched = new WeakSet<Browser>();
  let exits: Promise<void>[] = [];
  return {
    /** Starts watching `browser` (once per browser); returns it. */
    watch(browser: Browser): Browser {
      const child = browser.process();
      if (watched.has(browser) || !child) return browser;
      watched.add(browser);
      exits.push(
        new Promise<void>((resolve) =>
          child.once("exit", (_code, signal) => {
            if (signal === "SIGKILL" && !child.killed) killedAt = Date.now();
            resolve();
          }),
        ),
      );
      return browser;
    },
    /** Whether a watched browser was killed so since `since` (epoch ms); waits a little for the exits of browsers still ending. */
    async killedSince(since: number): Promise<boolean> {
      const pending = exits;
      exits = [];
      await Promise.race([Promise.all(pending), new Promise((resolve) => setTimeout(resolve, EXIT_WAIT_MS).unref())]);
      return killedAt !== undefined && killedAt >= since;
    },
  };
}

/** The failure of a run whose browser the out-of-memory killer ended (the recorder records it `function_crashed`, naming the limit). */
export function outOfMemory(ended: Extract<RunOutcome, { status: "failed" }>, memoryMb: number | undefined): RunOutcome {
  const limit = memoryMb === undefined ? "" : ` of ${memoryMb} MB`;
  const message = `The browser was killed (SIGKILL) while the run went on: the function ran out of its memory${limit} (the run had failed with ${ended.error.code}: ${ended.error.message.slice(0, 500)})`;
  return { status: "failed", error: { code: "out_of_memory", message }, logs: ended.logs, browser_ms: ended.browser_ms };
}
