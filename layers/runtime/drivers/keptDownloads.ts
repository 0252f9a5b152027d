import { readFile, rm } from "node:fs/promises";
import type { Browser, BrowserContext, CDPSession } from "puppeteer-core";
import { artifactContentType } from "../../../lambdas/artifacts/artifacts";
import { runInProgress, type RunState } from "../runContext";
import { keep } from "../saveArtifact";

/** Downloads a run keeps at most (each also counts against the run's artifact caps). */
const MAX_DOWNLOADS = 20;

/**
 * The browser-level CDP session through which downloads are directed and followed: one per
 * browser (a warm worker's browser serves many runs), made on first use. Opening one per
 * session cost a round trip each time, and none was ever detached.
 */
const downloadSessions = new WeakMap<Browser, Promise<CDPSession>>();
/** Downloads under way: the run whose page started each (by guid), and the file name the page suggested. */
const downloadsUnderWay = new Map<string, { run: RunState; suggested: string }>();
/** Downloads each run kept so far. */
const downloadsKept = new WeakMap<RunState, number>();

function downloadSession(browser: Browser): Promise<CDPSession> {
  let session = downloadSessions.get(browser);
  if (!session) {
    session = browser
      .target()
      .createCDPSession()
      .then((cdp) => {
        cdp.on("Browser.downloadWillBegin", (event: { guid: string; suggestedFilename: string }) => {
          const run = runInProgress();
          if (run) downloadsUnderWay.set(event.guid, { run, suggested: event.suggestedFilename });
        });
        cdp.on("Browser.downloadProgress", (event: { guid: string; state: string }) => {
          if (event.state === "inProgress") return;
          const download = downloadsUnderWay.get(event.guid);
          downloadsUnderWay.delete(event.guid);
          if (event.state === "completed" && download) keepDownload(download.run, download.suggested, `${download.run.downloadsDir as string}/${event.guid}`);
        });
        return cdp;
      });
    downloadSessions.set(browser, session);
    session.catch(() => downloadSessions.delete(browser));
  }
  return session;
}

/**
 * Makes what the session's pages download land in the run's downloads dir, and keeps each
 * finished download as the artifact `download-<its file name>` (the run's end waits for them,
 * a little; past the caps they are left out and noted in the log).
 */
export async function keepDownloads(browser: Browser, context: BrowserContext, run: RunState): Promise<void> {
  const cdp = await downloadSession(browser);
  try {
    await cdp.send("Browser.setDownloadBehavior", { behavior: "allowAndName", browserContextId: context.id, downloadPath: run.downloadsDir as string, eventsEnabled: true });
  } catch (error) {
    downloadSessions.delete(browser); // a session that went away: the next one opens another
    throw error;
  }
}

/**
 * Keeps a finished download of `run` (its `file`, which is then removed) as an artifact, unless
 * the run ended meanwhile or kept MAX_DOWNLOADS already. Both drivers keep downloads through it.
 */
export function keepDownload(run: RunState, suggested: string, file: string): void {
  const kept = (downloadsKept.get(run) ?? 0) + 1;
  downloadsKept.set(run, kept);
  if (run.ended || kept > MAX_DOWNLOADS) {
    if (!run.ended) console.error(`[browserfn] download ${suggested} not kept: a run keeps at most ${MAX_DOWNLOADS} downloads`);
    void rm(file, { force: true }).catch(() => undefined);
    return;
  }
  const name = `download-${suggested.replace(/[^A-Za-z0-9._-]/g, "_")}`.slice(0, 128);
  const saving = readFile(file)
    .then((bytes) => keep(run, name, new Uint8Array(bytes), artifactContentType(name, undefined)))
    .catch((error: unknown) => console.error(`[browserfn] download ${suggested} not kept: ${(error as Error).message}`))
    .finally(() => rm(file, { force: true }).catch(() => undefined));
  run.pending.add(saving);
  void saving.finally(() => run.pending.delete(saving));
}

