import { mkdir, readFile } from "node:fs/promises";
import path from "node:path";
import type { BrowserfnClient } from "../../client";
import { RECORDING_NAME_PATTERN } from "../../lambdas/recording/recordingMode";
import { replayHtml } from "../../lambdas/recording/replayHtml";
import { CliError } from "./args";
import { EXIT } from "./exitCodes";
import { writeFileHere } from "./saveArtifacts";

/** The player as the dashboard serves it (built by scripts/buildReplayPlayer.ts from the pinned rrweb-player). */
const PLAYER_DIR = path.join(__dirname, "..", "..", "lambdas", "dashboard");

/** What `runs replay` wrote: the folder, and per recorded page its recording and its player. */
export interface WrittenReplay {
  dir: string;
  pages: { recording: string; player: string; events: number }[];
}

/**
 * Writes the recordings of `runId` (`recording-<n>.json`) into `dir`, each with a
 * self-contained HTML player beside it (`replay-<n>.html`: open it in a browser, offline).
 * A run that kept no recording is an error that says why it may have none.
 */
export async function writeReplay(api: BrowserfnClient, runId: string, dir: string): Promise<WrittenReplay> {
  const { items } = await api.listArtifacts(runId);
  const recordings = items.filter((item) => RECORDING_NAME_PATTERN.test(String(item.name))).sort((a, b) => a.name.localeCompare(b.name, "en", { numeric: true }));
  if (recordings.length === 0) {
    throw new CliError(`The run ${runId} kept no recording (a function's \`recording\` setting keeps them: "failures" for runs that fail, "all" for every run; the default "off" keeps none)`, EXIT.api);
  }
  const [js, css] = await Promise.all([readFile(path.join(PLAYER_DIR, "rrwebPlayer.js"), "utf8"), readFile(path.join(PLAYER_DIR, "rrwebPlayer.css"), "utf8")]);
  try {
    await mkdir(dir, { recursive: true });
  } catch (error) {
    throw new CliError(`Cannot create ${dir}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`, 2);
  }
  const pages: WrittenReplay["pages"] = [];
  for (const item of recordings) {
    const n = /^recording-(\d+)\.json$/.exec(item.name)?.[1] ?? "1";
    const { bytes } = await api.downloadArtifact(runId, item.name);
    const text = new TextDecoder().decode(bytes);
    let events: unknown;
    try {
      events = JSON.parse(text);
    } catch {
      throw new CliError(`The recording ${item.name} of ${runId} is not JSON; nothing more was written`, EXIT.api);
    }
    if (!Array.isArray(events)) throw new CliError(`The recording ${item.name} of ${runId} is not a list of events`, EXIT.api);
    const recording = path.join(dir, item.name);
    const player = path.join(dir, `replay-${n}.html`);
    await writeFileHere(recording, bytes);
    await writeFileHere(player, new TextEncoder().encode(replayHtml(`Run ${runId}, page ${n}`, JSON.stringify(events), { js, css })));
    pages.push({ recording, player, events: events.length });
  }
  return { dir: path.resolve(dir), pages };
}
