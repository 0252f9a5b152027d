import { isStoreUnavailable } from "./dynamo";

/** Retries wait double from the first up to the longest. */
const RETRY_FIRST_MS = 250;
const RETRY_LONGEST_MS = 5_000;
/** After this long the retries stop (the next start settles what is left). */
const RETRY_FOR_MS = 5 * 60_000;

export interface RetryOutcome {
  /** Called once `write` succeeded after the store came back. */
  done(): void;
  /** Called when `write` failed otherwise, or the store stayed away past the retries. */
  gaveUp(error: unknown): void;
}

/**
 * Does `write` again, in the background, until the store answers: for a write that must not be
 * lost to an outage (a run's end, giving a plan slot back) and that its caller does not wait
 * for. Bounded, and timers do not keep the process alive.
 */
export function whenStoreIsBack(write: () => Promise<unknown>, outcome: RetryOutcome): void {
  const giveUpAt = Date.now() + RETRY_FOR_MS;
  const attempt = (wait: number) => {
    setTimeout(() => {
      write().then(outcome.done, (error: unknown) => {
        if (isStoreUnavailable(error) && Date.now() < giveUpAt) return attempt(Math.min(RETRY_LONGEST_MS, wait * 2));
        outcome.gaveUp(error);
      });
    }, wait).unref();
  };
  attempt(RETRY_FIRST_MS);
}
