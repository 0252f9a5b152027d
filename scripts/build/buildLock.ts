import { mkdir, readFile, rm, writeFile } from "node:fs/promises";
import path from "node:path";

/** How long a build waits for another one before it gives up. */
const WAIT_MS = 5 * 60_000;
const POLL_MS = 100;

/**
 * One build of dist/ at a time (several `browserfn` commands may find it stale at once): a
 * folder made atomically, holding the builder's pid. A lock whose process is gone is taken over.
 */
export async function holdBuildLock(dist: string): Promise<AsyncDisposable> {
  const dir = path.join(dist, ".building");
  const deadline = Date.now() + WAIT_MS;
  for (;;) {
    try {
      await mkdir(dir);
      await writeFile(path.join(dir, "pid"), String(process.pid));
      return { [Symbol.asyncDispose]: () => rm(dir, { recursive: true, force: true }) };
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
    }
    if (!(await holderAlive(dir))) {
      await rm(dir, { recursive: true, force: true });
      continue;
    }
    if (Date.now() > deadline) throw new Error(`another build of ${dist} has held ${dir} for ${WAIT_MS / 60_000} minutes`);
    await new Promise((resolve) => setTimeout(resolve, POLL_MS));
  }
}

async function holderAlive(dir: string): Promise<boolean> {
  const pid = Number(await readFile(path.join(dir, "pid"), "utf8").catch(() => ""));
  // Made but its pid not written yet: alive (a moment later it is written).
  if (!pid) return true;
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}
