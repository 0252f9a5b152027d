import { readFileSync, readlinkSync } from "node:fs";

/** Milliseconds per clock tick of /proc's CPU times (USER_HZ: 100 on Linux). */
const MS_PER_TICK = 10;

/** This thread's id on Linux (`/proc/thread-self` is `<pid>/task/<tid>`); null elsewhere. */
export function ownThreadId(): number | null {
  try {
    const id = Number(readlinkSync("/proc/thread-self").split("/").at(-1));
    return Number.isInteger(id) && id > 0 ? id : null;
  } catch {
    return null;
  }
}

/** CPU time (user + system, ms) a thread of this process has used; null when it cannot be read (gone, not Linux). */
export function threadCpuMs(threadId: number): number | null {
  try {
    const stat = readFileSync(`/proc/self/task/${threadId}/stat`, "utf8");
    // Fields after the command name (which may hold spaces): state is the first, utime the 12th, stime the 13th.
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    const ticks = Number(fields[11]) + Number(fields[12]);
    return Number.isFinite(ticks) ? ticks * MS_PER_TICK : null;
  } catch {
    return null;
  }
}
