/**
 * browserfn/runtime: what an automation imports to get a browser.
 *
 * ```ts
 * import { Session } from "browserfn/runtime";
 * export default async function run(url: string) {
 *   await using session = await Session.start({ timeout_minutes: 2 });
 *   const page = await session.newPage();
 *   await page.goto(url);
 *   return { title: await page.title() };
 * }
 * ```
 */
import type { BrowserContext, Page } from "puppeteer-core";
import { currentRun, type RunState } from "./runContext";

export type { Page } from "puppeteer-core";

/** Options of {@link Session.start}. */
export interface SessionOptions {
  /** Minutes after which the session closes itself (default 5); never later than the run's timeout. */
  timeout_minutes?: number;
}

const DEFAULT_TIMEOUT_MINUTES = 5;
// Node 20 defines Symbol.asyncDispose (as this registry symbol) on its main realm only, not in
// other realms such as jest's sandbox. Defining it when missing, as puppeteer-core also does,
// makes `await using` in user code and this class agree on one symbol whichever loads first.
(Symbol as { asyncDispose?: symbol }).asyncDispose ??= Symbol.for("nodejs.asyncDispose");
const asyncDispose: typeof Symbol.asyncDispose = Symbol.asyncDispose;

function timeoutMs(options: SessionOptions): number {
  const minutes = options.timeout_minutes ?? DEFAULT_TIMEOUT_MINUTES;
  if (typeof minutes !== "number" || !Number.isFinite(minutes) || minutes <= 0) {
    throw new Error(`timeout_minutes must be a positive number of minutes, got ${String(minutes)}`);
  }
  return minutes * 60_000;
}

/**
 * A fresh, isolated browser context (no cookies, storage or cache shared with any other
 * session or run). It closes when disposed (`await using`), when `close()` is called, when the
 * run ends, or after `timeout_minutes`, whichever comes first.
 */
export class Session {
  readonly #run: RunState;
  readonly #context: BrowserContext;
  readonly #openedAt: number;
  readonly #timer: ReturnType<typeof setTimeout>;
  #closing: Promise<void> | undefined;
  #closedReason = "";

  private constructor(run: RunState, context: BrowserContext, openedAt: number, limitMs: number) {
    this.#run = run;
    this.#context = context;
    this.#openedAt = openedAt;
    this.#timer = setTimeout(() => void this.#close("it reached its timeout"), limitMs);
    this.#timer.unref();
    run.sessions.add(this);
  }

  /**
   * Opens a session in a new browser context of this run's browser.
   * Throws when called outside a run, or with an invalid `timeout_minutes`.
   */
  static async start(options: SessionOptions = {}): Promise<Session> {
    const run = currentRun();
    const limitMs = Math.min(timeoutMs(options), run.deadline - Date.now());
    if (limitMs <= 0) throw new Error("The run has no time left to start a browser session");
    const openedAt = Date.now();
    const browser = await run.getBrowser();
    const context = await browser.createBrowserContext();
    if (run.ended) {
      // The function returned without awaiting this start: nothing may outlive the run.
      await context.close().catch(() => undefined);
      throw new Error("The run ended before the session started");
    }
    return new Session(run, context, openedAt, Math.max(0, limitMs - (Date.now() - openedAt)));
  }

  /** Opens a new tab in this session's context: a puppeteer-core Page. */
  async newPage(): Promise<Page> {
    if (this.#closing) throw new Error(`The session is closed: ${this.#closedReason}`);
    return this.#context.newPage();
  }

  /** Closes the session's context and all its pages. Safe to call more than once. */
  close(): Promise<void> {
    return this.#close("close() was called");
  }

  /** Called by `await using`: closes the session. */
  [asyncDispose](): Promise<void> {
    return this.close();
  }

  #close(reason: string): Promise<void> {
    if (!this.#closing) {
      this.#closedReason = reason;
      clearTimeout(this.#timer);
      // A context whose browser went away is closed already: nothing is left to release.
      this.#closing = this.#context
        .close()
        .catch(() => undefined)
        .then(() => {
          this.#run.browserMs += Date.now() - this.#openedAt;
          this.#run.sessions.delete(this);
        });
    }
    return this.#closing;
  }
}
