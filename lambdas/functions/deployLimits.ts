/**
 * How long a deploy job can be at work, from the settings of the deploy-job Lambda (lib/handlers.ts
 * reads them here): past STALE_DEPLOY_MS after a function became `deploying`, no run of its job
 * can be running or still to come.
 */

/** One run of the deploy job at most (Lambda's ceiling): a deploy waits minutes for the function to be Active. */
export const DEPLOY_JOB_TIMEOUT_MS = 15 * 60_000;

/** Runs of a job that threw, after the first (Lambda waits about 1, then 2 minutes before each). */
export const DEPLOY_JOB_RETRY_ATTEMPTS = 2;

/**
 * How long Lambda keeps a queued job (and its retries) before it gives up on it and hands it to
 * the sweeper: no run of a job starts later than this after it was queued. Room for both retries
 * of a job that throws at once (the store away for a moment); a job that ran for minutes before
 * it threw is not run again, its function is recorded `failed`.
 */
export const DEPLOY_JOB_MAX_EVENT_AGE_MS = 10 * 60_000;

/** Between a record's write and its job's queueing (the SDK's retries of the Invoke), and clocks that differ. */
const ENQUEUE_MARGIN_MS = 60_000;

/**
 * A function still `deploying` this long after its last change has no deploy job at work on it
 * and none to come (the latest start plus the longest run): its deploy is lost. A resend of the
 * code deploys it again (see deployStep), and the AWS sweeper records it `failed`.
 */
export const STALE_DEPLOY_MS = DEPLOY_JOB_MAX_EVENT_AGE_MS + DEPLOY_JOB_TIMEOUT_MS + ENQUEUE_MARGIN_MS;
