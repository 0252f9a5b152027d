import { statfsSync } from "node:fs";
import { setTimeout as sleep } from "node:timers/promises";
import path from "node:path";

/**
 * The private file systems (tmpfs) of a namespaces sandbox: `/tmp`, `/dev/shm` and the runtime
 * dir (the browser's profile and its downloads folder). Their files are memory: each is capped
 * at the function's `memory_mb` when the sandbox starts, what they hold counts toward it in
 * every sample, and the host empties them after each run.
 */
export function sandboxMounts(runtimeDir: string): string[] {
  return ["/tmp", "/dev/shm", runtimeDir];
}

/** The size cap of each of a sandbox's file systems, for a function of `memoryMb`. */
export function tmpfsBytes(memoryMb: number): number {
  return Math.max(1, Math.round(memoryMb)) * 1024 * 1024;
}

/**
 * What a sandbox's file systems hold (MB), read from outside through `/proc/<pid>/root` of its
 * first process (statfs: a few microseconds each). Files the browser has open count even once
 * they are deleted: their pages are still held. Throws when the sandbox cannot be read (gone).
 */
export function sandboxFilesMb(pid: number, mounts: string[]): number {
  let bytes = 0;
  for (const mount of mounts) {
    const stats = statfsSync(path.join(`/proc/${pid}/root`, mount));
    bytes += (stats.blocks - stats.bfree) * stats.bsize;
  }
  return bytes / (1024 * 1024);
}

/** statfs's type of a tmpfs. */
const TMPFS_MAGIC = 0x01021994;

/**
 * Waits until the sandbox of first process `pid` has its file systems mounted (bubblewrap mounts
 * them once it is told to go: until then its root is another), each a tmpfs of `bytes`, so that
 * what they hold can be read from here. Throws when they cannot be read from here (no access to
 * the sandbox: its files would not count), when `checkAlive` throws (the sandbox ended), or when
 * they are not there within `timeoutMs`.
 */
export async function awaitSandboxMounts(pid: number, mounts: string[], bytes: number, timeoutMs: number, checkAlive: () => void): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  for (;;) {
    let ready = true;
    let seen = "";
    for (const mount of mounts) {
      try {
        const stats = statfsSync(path.join(`/proc/${pid}/root`, mount));
        if (stats.type !== TMPFS_MAGIC || stats.blocks * stats.bsize !== bytes) {
          ready = false;
          seen += ` ${mount}: type ${stats.type.toString(16)}, ${stats.blocks * stats.bsize} bytes`;
        }
      } catch (error) {
        const code = (error as NodeJS.ErrnoException).code;
        if (code !== "ENOENT") throw new Error(`the sandbox's file systems cannot be read (${code}): their use would not count toward memory`);
        ready = false;
        seen += ` ${mount}: ENOENT`;
      }
    }
    if (ready) return;
    checkAlive();
    if (performance.now() > deadline) throw new Error(`the sandbox's file systems were not mounted in time:${seen}`);
    await sleep(5);
  }
}
