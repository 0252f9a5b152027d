/** The most items a batch may have (shared/API.md). */
export const MAX_BATCH_ITEMS = 1000;

/** How many of a batch's runs are in each status. */
export interface BatchCounts {
  queued: number;
  running: number;
  succeeded: number;
  failed: number;
  timed_out: number;
  canceled: number;
}

/** A batch as stored: its function and version, and its runs' ids in the order of its items. */
export interface BatchItem {
  batch_id: string;
  account_id: string;
  function_id: string;
  function_name: string;
  version: number;
  run_ids: string[];
  created_at: string;
  /** When its last run ended, once every run has (then `counts` are final too); null before. */
  finished_at: string | null;
  /** The final counts, kept once every run has ended; null before (they are read from the runs). */
  counts: BatchCounts | null;
}
