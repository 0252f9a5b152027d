/**
 * When a delivery is tried again, in units of the base delay (5 s by default): after the
 * first attempt 5 s, then 5 min, 30 min, 2 h, 5 h, 10 h and 10 h. Eight attempts over about
 * 27.6 hours (more than the 24 h the API promises), all under the same webhook-id; a delivery
 * whose eighth attempt fails is `failed`.
 */
const DELAYS_IN_BASE_UNITS = [1, 60, 360, 1_440, 3_600, 7_200, 7_200] as const;

/** The default base delay: 5 s. Locally `BROWSERFN_WEBHOOK_RETRY_BASE_MS` scales the whole schedule (tests make it fast). */
export const DEFAULT_RETRY_BASE_MS = 5_000;

/** Attempts a delivery gets at most. */
export const MAX_DELIVERY_ATTEMPTS = DELAYS_IN_BASE_UNITS.length + 1;

/** How long to wait after the `attempts`-th failed attempt (1-based); null when none is left. */
export function retryDelayMs(attempts: number, baseMs: number = DEFAULT_RETRY_BASE_MS): number | null {
  const units = DELAYS_IN_BASE_UNITS[attempts - 1];
  return units === undefined ? null : units * baseMs;
}
