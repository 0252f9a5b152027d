import { spawnSync } from "node:child_process";
import { mkdir, open } from "node:fs/promises";
import path from "node:path";

/** The file whose lock says a service runs on the data dir; it holds `{pid, url}` of that service. */
export const LOCK_FILE = "service.lock";

/** A second start on a data dir that a running service holds. */
export class DataDirInUse extends Error {
  constructor(
    readonly pid: number | null,
    readonly url: string | null,
  ) {
    super(`browserfn is already running on this data dir (pid ${pid ?? "unknown"}, ${url ?? "still starting"})`);
    this.name = "DataDirInUse";
  }
}

export interface DataDirLock {
  /** Writes the URL the service serves beside its pid, for the message of a second start. */
  announce(url: string): Promise<void>;
  /** Gives the data dir up (the kernel does it too if the process dies). */
  release(): Promise<void>;
}

/**
 * Takes the data dir for this process's life, before anything in it is touched: an exclusive
 * `flock` on `<dataDir>/service.lock`. Node has no flock, so util-linux's `flock -n` takes it on
 * the file description this process opened and hands it over (fd 3); the lock belongs to that
 * open file description, so it stays held after `flock` exits, as long as this process keeps
 * the file open, and the kernel frees it when the process dies however it dies (SIGKILL, a
 * crash): no stale lock to clean, no pid to trust. A second start finds it taken and throws
 * DataDirInUse, naming the holder from the file's contents.
 */
export async function lockDataDir(dataDir: string): Promise<DataDirLock> {
  await mkdir(dataDir, { recursive: true, mode: 0o700 });
  const file = await open(path.join(dataDir, LOCK_FILE), "a+", 0o600);
  const taken = spawnSync("flock", ["--nonblock", "--exclusive", "3"], { stdio: ["ignore", "ignore", "pipe", file.fd], timeout: 10_000 });
  if (taken.error || taken.status !== 0) {
    const holder = await readHolder(file).catch(() => ({ pid: null, url: null }));
    await file.close();
    if (taken.error) throw new Error(`Could not lock the data dir: running flock (util-linux) failed: ${taken.error.message}`);
    if (taken.status === 1) throw new DataDirInUse(holder.pid, holder.url);
    throw new Error(`Could not lock the data dir: flock exited ${taken.status ?? taken.signal}: ${String(taken.stderr).trim()}`);
  }
  const write = async (url: string | null) => {
    await file.truncate(0);
    await file.write(JSON.stringify({ pid: process.pid, url }) + "\n", 0);
  };
  await write(null);
  let released = false;
  return {
    announce: (url) => write(url),
    async release() {
      if (released) return;
      released = true;
      await file.truncate(0).catch(() => undefined);
      await file.close();
    },
  };
}

async function readHolder(file: Awaited<ReturnType<typeof open>>): Promise<{ pid: number | null; url: string | null }> {
  const { buffer, bytesRead } = await file.read(Buffer.alloc(4096), 0, 4096, 0);
  const parsed = JSON.parse(buffer.subarray(0, bytesRead).toString("utf8")) as { pid?: unknown; url?: unknown };
  return {
    pid: typeof parsed.pid === "number" && Number.isInteger(parsed.pid) ? parsed.pid : null,
    url: typeof parsed.url === "string" && /^https?:\/\/[^\s]{1,200}$/.test(parsed.url) ? parsed.url : null,
  };
}
