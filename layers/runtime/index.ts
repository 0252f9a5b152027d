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
import type { ContextSetup, Driver, DriverContext, DriverTypes, EvidencePage } from "./drivers/driverContext";
import { openContext, parseDriver } from "./drivers/openContext";
import { sessionRuns } from "./pageFiles";
import { beforeContextClose, contextsLeftToHost, currentRun, MAX_RETIRED_SESSIONS, type RunState } from "./runContext";
import { type SavedArtifact, saveArtifact } from "./saveArtifact";
import { openSession, type SessionSetup, type StateOptions } from "./sessionSetup";
import { ProfileError, ProfileLockedError } from "./profileErrors";

export type { Page } from "puppeteer-core";
export type { Driver } from "./drivers/driverContext";
export { ProfileError, ProfileLockedError } from "./profileErrors";
export type { SessionProxyOption } from "./sessionProxy";

/** Options of {@link Session.start}. */
export interface SessionOptions<D extends Driver = Driver> extends StateOptions {
  /** Minutes after which the session closes itself (default 5); never later than the run's timeout. */
  timeout_minutes?: number;
  /**
   * The library the session's pages speak: `"puppeteer"` (default; puppeteer-core's `Page`) or
   * `"playwright"` (playwright-core's `Page` and `BrowserContext`), on the same warm browser.
   */
  driver?: D;
  /**
   * Opens the session with the saved state of the account's profile of this name (cookies,
   * localStorage, IndexedDB). The function may open the names its code gives here literally and
   * those of its `profiles` setting; any other name throws. Either driver: the format is one.
   */
  profile?: string;
  /** With `profile`: the session's state is saved back into it when it closes, if the run succeeds (one writer at a time: ProfileLockedError after 30 s). */
  persist?: boolean;
  /** This session's proxy instead of the function's `proxy` setting (`null`: none). Either driver. */
  proxy?: StateOptions["proxy"];
}

const DEFAULT_TIMEOUT_MINUTES = 5;
/** A session outlives its run's deadline by at most this long (the runner ends it first, see Session.start). */
const SESSION_DEADLINE_GRACE_MS = 5_000;
// Node 20 defines Symbol.asyncDispose (as this registry symbol) on its main realm only, not in
// other realms such as jest's sandbox. Defining it when missing, as puppeteer-core also does,
// makes `await using` in user code and this class agree on one symbol whichever loads first.
(Symbol as { asyncDispose?: symbol }).asyncDispose ??= Symbol.for("nodejs.asyncDispose");
const asyncDispose: typeof Symbol.asyncDispose = Symbol.asyncDispose;

function timeoutMs(options: SessionOptions): number {
  if (typeof options !== "object" || options === null) throw new Error("Session.start() takes an options object, such as { timeout_minutes: 2 }");
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
export class Session<D extends Driver = "puppeteer"> {
  readonly #run: RunState;
  readonly #context: DriverContext<D>;
  /** Its proxy and profile (sessionSetup.ts): the profile's state is saved before the context closes. */
  readonly #state: SessionSetup;
  readonly #openedAt: number;
  readonly #timer: ReturnType<typeof setTimeout>;
  #closing: Promise<void> | undefined;
  #closedReason = "";
  /** When `await using` disposed it: closed to the user, its context kept until the run ends (RunState.retired). */
  #retiredAt: number | undefined;

  private constructor(run: RunState, context: DriverContext<D>, state: SessionSetup, openedAt: number, limitMs: number) {
    this.#run = run;
    this.#context = context;
    this.#state = state;
    this.#openedAt = openedAt;
    this.#timer = setTimeout(() => void this.#close("it reached its timeout"), limitMs);
    this.#timer.unref();
    run.sessions.add(this);
    sessionRuns.set(context.context, run);
  }

  /**
   * Opens a session in a new browser context of this run's browser.
   * Throws when called outside a run, or with an invalid `timeout_minutes`.
   */
  static async start<D extends Driver = "puppeteer">(options: SessionOptions<D> = {}): Promise<Session<D>> {
    // A refusal that comes back later (a profile the service will not open) is thrown with the
    // caller's stack, so that the run's error names the line of the code that started the session.
    const call = new Error();
    try {
      return await Session.open(options, {});
    } catch (error) {
      if (error instanceof ProfileError || error instanceof ProfileLockedError) error.stack = `${error.name}: ${error.message}\n${(call.stack ?? "").split("\n").slice(1).join("\n")}`;
      throw error;
    }
  }

  /**
   * Session.start with the per-context `setup` (what a session asks of its context beyond
   * isolation: see ContextSetup). For browserfn's own modules (the playwright and puppeteer
   * shims, profiles, proxies), not for automations. @internal
   */
  static async open<D extends Driver = "puppeteer">(options: SessionOptions<D>, setup: ContextSetup): Promise<Session<D>> {
    const run = currentRun();
    if (run.deadline - Date.now() <= 0) throw new Error("The run has no time left to start a browser session");
    // Past the run's deadline the runner closes every session itself, after keeping the
    // evidence of its pages; this session's own timer is only for `timeout_minutes`.
    const limitMs = Math.min(timeoutMs(options), run.deadline - Date.now() + SESSION_DEADLINE_GRACE_MS);
    const driver = parseDriver(options.driver) as D;
    const openedAt = Date.now();
    // The profile is fetched (and its lease taken) while the driver opens the context.
    const state = openSession(run, options);
    const context = await openContext(run, driver, { ...setup, state });
    if (run.ended) {
      // The function returned without awaiting this start: nothing may outlive the run.
      await context.close().catch(() => undefined);
      throw new Error("The run ended before the session started");
    }
    return new Session(run, context, state, openedAt, Math.max(0, limitMs - (Date.now() - openedAt)));
  }

  /** The session's browser context: puppeteer-core's `BrowserContext`, or Playwright's with `driver: "playwright"`. */
  get context(): DriverTypes[D]["context"] {
    return this.#context.context;
  }

  /** Opens a new tab in this session's context: a puppeteer-core Page, or a Playwright Page with `driver: "playwright"`. */
  async newPage(): Promise<DriverTypes[D]["page"]> {
    if (this.#closing || this.#retiredAt !== undefined) throw new Error(`The session is closed: ${this.#closedReason}`);
    return this.#context.newPage();
  }

  /** Its open pages (the runner's evidence of a failed run). @internal */
  async pages(): Promise<EvidencePage[]> {
    return this.#closing ? [] : this.#context.pages();
  }

  /** Closes the session's context and all its pages. Safe to call more than once. */
  close(): Promise<void> {
    return this.#close("close() was called");
  }

  /**
   * Called by `await using`: the session is closed to the function (no new pages, its time stops
   * counting), and its pages stay until the run ends, so that a run failing inside the block
   * still has them for its failure screenshot and HTML. At most MAX_RETIRED_SESSIONS wait; the
   * oldest is closed for a newer one.
   */
  [asyncDispose](): Promise<void> {
    if (this.#closing || this.#retiredAt !== undefined) return this.#closing ?? Promise.resolve();
    if (this.#run.ended) return this.close();
    this.#retiredAt = Date.now();
    this.#closedReason = "it was disposed (the `await using` block ended)";
    clearTimeout(this.#timer);
    this.#run.sessions.delete(this);
    this.#run.retired.push(this);
    const oldest = this.#run.retired.length > MAX_RETIRED_SESSIONS ? this.#run.retired.shift() : undefined;
    return oldest ? oldest.close() : Promise.resolve();
  }

  #close(reason: string): Promise<void> {
    if (!this.#closing) {
      this.#closedReason = reason;
      clearTimeout(this.#timer);
      // At the end of a run whose host disposes what it leaves, the context is left to the host.
      const leave = contextsLeftToHost(this.#run);
      // The profile's state is read before the context goes (a failed save is said in the log).
      const saved = this.#state.beforeClose(leave).catch((error: unknown) => console.error(`[browserfn] the profile was not saved: ${(error as Error).message}`));
      // A context whose browser went away is closed already: nothing is left to release.
      // What the recorders of the run's open pages hold is taken before the context's pages go with it.
      const taken = beforeContextClose(this.#run);
      this.#closing = Promise.all([saved, taken])
        .then(() => (leave ? undefined : this.#context.close()))
        .catch(() => undefined)
        .then(() => {
          this.#run.browserMs += (this.#retiredAt ?? Date.now()) - this.#openedAt;
          this.#run.sessions.delete(this);
          const retired = this.#run.retired.indexOf(this);
          if (retired >= 0) this.#run.retired.splice(retired, 1);
        });
    }
    return this.#closing;
  }
}

export type { SavedArtifact } from "./saveArtifact";

/**
 * Files kept with the run (a screenshot, a PDF, a CSV, a download): listed by
 * `GET /runs/{run_id}/artifacts`, served by `GET /runs/{run_id}/artifacts/{name}`, kept 7 days
 * unless the service is configured otherwise. Bigger or binary output belongs here, not in the
 * return value (which is JSON, at most 6 MB). `page.screenshot({ path })` and
 * `page.pdf({ path })` on a session's page keep their file here too, named after the path's
 * last part (see pageFiles.ts).
 */
export const artifacts = {
  /**
   * Keeps `data` as the run's artifact `name` (`^[A-Za-z0-9._-]{1,128}$`; the same name again
   * replaces it). A run keeps at most 100 artifacts and 100 MB. `contentType` defaults to what
   * the name's extension says (`.png` image/png, `.pdf`, `.html`, `.json`, `.csv`, `.txt`, …).
   */
  async save(name: string, data: Uint8Array | string, options: { contentType?: string } = {}): Promise<SavedArtifact> {
    return saveArtifact(currentRun("artifacts.save()"), name, data, options.contentType);
  },
};

/**
 * The function's secrets (`PUT /functions/{ref}/secrets/{NAME}`, `browserfn secrets set`):
 * only this function's runs can read them. Their values never appear in the run's logs,
 * result, error or parameters as the service keeps and shows them: each is replaced by
 * `[secret]`.
 */
export const secrets = {
  /** The secret `name`'s value, or undefined when the function has no secret of that name. */
  get(name: string): string | undefined {
    const run = currentRun("secrets.get()");
    if (typeof name !== "string") throw new Error(`secrets.get() takes a secret's name (a string such as "API_TOKEN"), got ${typeof name}`);
    const all = run.secrets ?? {};
    return Object.hasOwn(all, name) ? all[name] : undefined;
  },
};
