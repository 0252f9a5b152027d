import { currentRun, type RunState } from "../../layers/runtime/runContext";

/** What puppeteer says of a call whose page (its CDP target) was closed while the call was under way. */
const PAGE_CLOSED = /Target closed|Session closed/;
/** What it says when the page's document went away: a closed session, or just a navigation. */
const CONTEXT_DESTROYED = /Execution context was destroyed/;

const HINT =
  "The browser call failed: the session was closed before this call finished — did the function return a promise " +
  "without `await` inside `await using session` (or close the session before the promise settled)? " +
  "Write `return await …`. Original error: ";

function messageOf(value: unknown): string {
  return value instanceof Error && typeof value.message === "string" ? value.message : "";
}

/**
 * The message of a run that failed with `error`, with the likely cause named first when a
 * browser call failed because its session was closed under it: the classic `return
 * page.title()` (a promise, not awaited) inside `await using session`, which disposes of the
 * session at the return, before the call finishes. The original message follows the hint.
 *
 * "Target closed" / "Session closed" (in the message or its `cause`) say by themselves that the
 * call's page was closed under it. "Execution context was destroyed" also follows a plain
 * navigation, so it gets the hint only when a session of the run had closed (`sessionClosed`).
 * Any other message is returned as it is.
 */
export function explainClosedSession(error: Error, sessionClosed: boolean): string {
  const message = error.message;
  if (typeof message !== "string") return message;
  const texts = [message, messageOf((error as { cause?: unknown }).cause)];
  const pageClosed = texts.some((text) => PAGE_CLOSED.test(text));
  const contextDestroyed = texts.some((text) => CONTEXT_DESTROYED.test(text));
  return pageClosed || (contextDestroyed && sessionClosed) ? `${HINT}${message}` : message;
}

/**
 * For the run in progress (call it while the run is): whether a session of it has closed by
 * the time the returned function is called. A session's browser time is counted when its
 * close completes, so any counted time means one has.
 */
export function sessionClosedCheck(): () => boolean {
  let run: RunState;
  try {
    run = currentRun();
  } catch {
    return () => false; // not in a run: no session of it can have closed
  }
  return () => run.browserMs > 0;
}
