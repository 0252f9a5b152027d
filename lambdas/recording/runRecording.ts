/**
 * The recordings of one run, in the runner: each page the run opens is recorded (pageRecorder)
 * while the run goes; at its end, under the function's `recording` setting, each page's events
 * are kept as the artifact `recording-<n>.json` (secret values redacted), or dropped. At most
 * MAX_RECORDING_BYTES_PER_RUN are held: past them recording stops, with a note in the run's
 * log, and the run goes on. What is kept is checked again by the service (checkRecording).
 */
import type { PageTarget } from "./pageTarget";
import { type PageRecording, recordPage } from "./pageRecorder";
import { keepsRecording, MAX_RECORDED_PAGES, MAX_RECORDING_BYTES_PER_RUN, type RecordingMode, recordingName } from "./recordingMode";

export interface RecordingSink {
  save(name: string, data: Uint8Array, contentType: string): Promise<unknown>;
}

interface RecordedPage {
  batches: string[];
  recording: Promise<PageRecording | undefined>;
}

export interface RunRecording {
  /** The runner's hook for each page the run opens. */
  pageOpened(page: PageTarget): Promise<void>;
  /** Keeps the pages' recordings when `mode` says so for a run that `succeeded` (or not); never throws. */
  keep(succeeded: boolean, sink: RecordingSink | undefined, redact: (json: string) => string): Promise<void>;
}

/** A run's recordings under `mode` ("off" records nothing); `note` writes a line into the run's log. */
export function startRunRecording(mode: RecordingMode, note: (line: string) => void, capBytes = MAX_RECORDING_BYTES_PER_RUN): RunRecording {
  const pages: RecordedPage[] = [];
  let bytes = 0;
  let stopped = false;
  const stop = (why: string) => {
    if (stopped) return;
    stopped = true;
    note(`[browserfn] recording stopped: ${why}; the run goes on`);
  };
  return {
    async pageOpened(target) {
      if (mode === "off" || stopped) return;
      if (pages.length >= MAX_RECORDED_PAGES) return stop(`a run records at most ${MAX_RECORDED_PAGES} pages`);
      const page: RecordedPage = { batches: [], recording: Promise.resolve(undefined) };
      pages.push(page);
      const onBatch = (payload: string) => {
        if (stopped) return;
        // Counted as UTF-16 units (at most the bytes' count for the recorder's ASCII-escaped JSON, a little under for other text).
        if (bytes + payload.length > capBytes) return stop(`the run's recordings reached ${Math.round(capBytes / 1048576)} MB`);
        bytes += payload.length;
        page.batches.push(payload);
      };
      page.recording = target.cdp().then(
        (cdp) => recordPage(cdp, onBatch),
        () => undefined,
      );
      await page.recording.catch(() => undefined);
    },
    async keep(succeeded, sink, redact) {
      if (mode === "off" || !sink || !keepsRecording(mode, succeeded)) return;
      for (const [index, page] of pages.entries()) {
        const recording = await page.recording.catch(() => undefined);
        await recording?.flush();
        if (page.batches.length === 0) continue;
        try {
          const json = redact(joinBatches(page.batches));
          await sink.save(recordingName(index + 1), new TextEncoder().encode(json), "application/json");
        } catch (error) {
          note(`[browserfn] recording of page ${index + 1} not kept: ${(error as Error).message}`);
        }
      }
    },
  };
}

/** The batches (each JSON text of an array of events) as one array; a batch that is not an array is left out. */
function joinBatches(batches: readonly string[]): string {
  const parts: string[] = [];
  for (const batch of batches) {
    const inner = batch.trim();
    if (!inner.startsWith("[") || !inner.endsWith("]")) continue;
    const body = inner.slice(1, -1).trim();
    if (body !== "") parts.push(body);
  }
  return `[${parts.join(",")}]`;
}
