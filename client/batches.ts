import { WaitTimeoutError } from "./errors";
import type { Batch } from "./types";

/** How long waitForBatch waits and how often it looks. */
export interface WaitBatchOptions {
  /** Give up (WaitTimeoutError) after this long. Default 1 hour. */
  timeoutMs?: number;
  /** The longest pause between two `GET /batches/{id}`; polls start at 250 ms and grow to it. Default 5000 ms. */
  pollIntervalMs?: number;
  /** Called with the batch after each poll that found runs still going. */
  onPoll?: (batch: Batch) => void;
}

/** Reads a batch until it has `finished_at` (every run ended), waiting longer between reads up to `pollIntervalMs`. */
export async function waitForBatch(get: (batchId: string) => Promise<Batch>, batchId: string, options: WaitBatchOptions = {}): Promise<Batch> {
  const deadline = Date.now() + (options.timeoutMs ?? 3_600_000);
  const maxPause = options.pollIntervalMs ?? 5000;
  let pause = Math.min(250, maxPause);
  for (;;) {
    const batch = await get(batchId);
    if (batch.finished_at !== null) return batch;
    options.onPoll?.(batch);
    const left = deadline - Date.now();
    if (left <= 0) {
      throw new WaitTimeoutError({
        status: 0,
        code: "wait_timeout",
        message: `Batch ${batchId} still has runs going; stopped waiting (they go on; GET /batches/${batchId} counts them)`,
        details: { batch_id: batchId, counts: batch.counts },
        runId: batchId,
      });
    }
    await new Promise((resolve) => setTimeout(resolve, Math.min(pause, left)));
    pause = Math.min(pause * 2, maxPause);
  }
}
