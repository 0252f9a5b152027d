/**
 * The recordings of one run, in the runner: each page the run opens is recorded (pageRecorder)
 * while the run goes. Its events stay in the page until the run ends, except those of documents
 * it left (sent as they go). At the run's end, only when the function's `recording` setting keeps
 * the run's recordings, each page's events are taken and kept as the artifact
 * `recording-<n>.json` (secret values redacted); otherwise nothing more leaves the pages. At
 * most MAX_RECORDING_BYTES_PER_RUN are kept: past them recording stops, with a note in the run's
 * log, and the run goes on. What is kept is checked again by the service (checkRecording).
 */
import type { OpenedPages } from "../runner/drivers/openedPageGate";
import type { PageTarget } from "./pageTarget";
import { type PopupRecorder, recordPopups } from "./popupRecorder";
import { type PageRecording, type RecorderMessage, recordPage } from "./pageRecorder";
import { keepsRecording, MAX_RECORDED_PAGES, MAX_RECORDING_BYTES_PER_RUN, type RecordingMode, recordingName } from "./recordingMode";

/** How long the run's end waits for one page's recorder to hand over its events (a page busy in a loop may never answer). */
const TAKE_WAIT_MS = 5_000;

export interface RecordingSink {
  save(name: string, data: Uint8Array, contentType: string): Promise<unknown>;
}

interface RecordedPage {
  batches: string[];
  /** True once the page is closed (its events were sent as it went). */
  closed: () => boolean;
  recording: Promise<PageRecording | undefined>;
}

export interface RunRecording {
  /** The runner's hook for each page the run opens. */
  pageOpened(page: PageTarget): Promise<void>;
  /** Takes what the open pages' recorders hold now (a context is about to close); never throws. */
  takeOpen(): Promise<void>;
  /** Keeps the pages' recordings when `mode` says so for a run that `succeeded` (or not); never throws. */
  keep(succeeded: boolean, sink: RecordingSink | undefined, redact: (json: string) => string): Promise<void>;
  /** Stops watching for popups (the run ended). */
  close(): void;
}

/**
 * A run's recordings under `mode` ("off" records nothing); `note` writes a line into the run's
 * log. `openedPages` gives the drivers' pipe, on which the pages the recorded pages open are held
 * and recorded too (see popupRecorder; absent: popups are not recorded).
 */
export function startRunRecording(mode: RecordingMode, note: (line: string) => void, openedPages?: () => Promise<OpenedPages>, capBytes = MAX_RECORDING_BYTES_PER_RUN): RunRecording {
  const pages: RecordedPage[] = [];
  let popups: Promise<PopupRecorder | undefined> | undefined;
  let ended = false;
  let bytes = 0;
  let stopped = false;
  const stop = (why: string) => {
    if (stopped) return;
    stopped = true;
    note(`[browserfn] recording stopped: ${why}; the run goes on`);
  };
  /** Records `target`; true once its recorder is in place; `sent` is told once its commands are sent (or it is not recorded). */
  const record = async (target: PageTarget, sent?: () => void): Promise<boolean> => {
    if (mode === "off" || stopped || ended) return false;
    if (pages.length >= MAX_RECORDED_PAGES) {
      stop(`a run records at most ${MAX_RECORDED_PAGES} pages`);
      return false;
    }
    const page: RecordedPage = { batches: [], closed: () => target.closed(), recording: Promise.resolve(undefined) };
    pages.push(page);
    const reached = `the run's recordings reached ${Math.round(capBytes / 1048576)} MB`;
    const onMessage = (message: RecorderMessage) => {
      if (stopped) return;
      if ("capped" in message) return stop(reached);
      // Counted as UTF-16 units (at most the bytes' count for the recorder's ASCII-escaped JSON, a little under for other text).
      if (bytes + message.batch.length > capBytes) return stop(reached);
      bytes += message.batch.length;
      page.batches.push(message.batch);
    };
    page.recording = target.cdp().then(
      (cdp) =>
        recordPage(cdp, onMessage, () => {
          target.commandsSent?.();
          sent?.();
        }),
      () => undefined,
    );
    const recording = await page.recording.catch(() => undefined);
    const targetId = recording?.targetId;
    if (targetId !== undefined) void popups?.then((watch) => watch?.recorded(targetId));
    return recording !== undefined;
  };
  /** Takes what the page's recorder holds into its batches. */
  const take = async (page: RecordedPage, index: number) => {
    const recording = await page.recording.catch(() => undefined);
    // A page closed meanwhile sent its events as it went (or was taken before its context closed); one that does not answer is left as it is.
    if (!recording || page.closed()) return;
    await within(recording.take(), TAKE_WAIT_MS).catch((error: unknown) => {
      if (error === LATE) note(`[browserfn] the recording of page ${index + 1} lacks its last document: it did not hand its events over within ${TAKE_WAIT_MS / 1000} s`);
    });
  };
  return {
    async pageOpened(target) {
      if (mode === "off" || stopped) return;
      // The first recorded page sets the hold for popups on the drivers' pipe (no command is sent
      // for it: a connection is opened only once a recorded page opens a page).
      if (openedPages && !popups) {
        popups = openedPages().then((opened) => recordPopups(opened, record)).catch((error: unknown) => {
          note(`[browserfn] pages this run opens (popups) are not recorded: ${(error as Error).message}`);
          return undefined;
        });
      }
      // The page goes on once its recorder's commands are sent, not answered: the browser runs
      // them before the page's next navigation, which is sent after them on the same pipe (and
      // replays them to the renderer the navigation lands in), so the recorder is in place.
      let sent = () => {};
      const commandsSent = new Promise<void>((resolve) => (sent = resolve));
      await Promise.race([commandsSent, record(target, sent)]);
    },
    close() {
      ended = true;
      void popups?.then((watch) => watch?.close());
    },
    async takeOpen() {
      if (mode === "off") return;
      await Promise.all(pages.map((page, index) => take(page, index)));
    },
    async keep(succeeded, sink, redact) {
      if (mode === "off" || !sink || !keepsRecording(mode, succeeded)) return;
      for (const [index, page] of pages.entries()) {
        await take(page, index);
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

const LATE = new Error("late");

/** Resolves as `work` does, or rejects with LATE once `ms` went by. */
function within(work: Promise<void>, ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<void>((_, reject) => (timer = setTimeout(() => reject(LATE), ms)));
  return Promise.race([work, late]).finally(() => clearTimeout(timer));
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
