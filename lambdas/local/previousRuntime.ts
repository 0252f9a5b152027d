import { readdir, readFile, rm, writeFile } from "node:fs/promises";
import path from "node:path";

const MARKER_FILE = "runtime-dir";

/**
 * Kills what a previous start on this data dir left running (after a crash or SIGKILL the
 * service could not stop its workers and browsers) and removes its runtime dir, then
 * remembers the new runtime dir for the next start.
 */
export async function replacePreviousRuntime(dataDir: string, runtimeDir: string): Promise<number> {
  const marker = path.join(dataDir, MARKER_FILE);
  const previous = (await readFile(marker, "utf8").catch(() => "")).trim();
  let killed = 0;
  if (previous.startsWith("/") && previous !== runtimeDir) {
    for (const pid of await processesNaming(previous)) {
      try {
        process.kill(pid, "SIGKILL");
        killed++;
      } catch {
        // ended meanwhile
      }
    }
    await rm(previous, { recursive: true, force: true });
  }
  await writeFile(marker, `${runtimeDir}\n`, { mode: 0o600 });
  return killed;
}

async function processesNaming(dir: string): Promise<number[]> {
  const pids: number[] = [];
  for (const entry of await readdir("/proc").catch(() => [] as string[])) {
    if (!/^\d+$/.test(entry) || Number(entry) === process.pid) continue;
    const cmdline = await readFile(`/proc/${entry}/cmdline`, "utf8").catch(() => "");
    if (cmdline.includes(dir)) pids.push(Number(entry));
  }
  return pids;
}
