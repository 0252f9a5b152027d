import { readdirSync, readFileSync, readlinkSync } from "node:fs";
import { processesWith } from "./processes";

/** Command line of a process as its arguments ([] once it is gone). */
export function cmdline(pid: number): string[] {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0").filter(Boolean);
  } catch {
    return [];
  }
}

/** The service's worker processes (their command line names the worker bundle in the runtime dir). */
export function workerPids(runtimeDir: string): number[] {
  return processesWith(`${runtimeDir}/worker.cjs`).filter((pid) => cmdline(pid).some((arg) => arg.endsWith("/worker.cjs")) && !cmdline(pid).includes("--ro-bind-try"));
}

/**
 * Main processes of the service's browsers. Renderers and helpers carry `--type=`; and a child
 * the browser has forked but not yet exec'd still shows the browser's own command line, so a
 * process whose parent is one of them is not counted (seen as a second browser once in CI).
 */
export function browserPids(runtimeDir: string): number[] {
  const matches = processesWith(`--user-data-dir=${runtimeDir}/profile-`).filter((pid) => !cmdline(pid).some((arg) => arg.startsWith("--type=")));
  const found = new Set(matches);
  return matches.filter((pid) => !found.has(parentPid(pid)));
}

function parentPid(pid: number): number {
  try {
    return Number(readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]?.split(" ")[1]);
  } catch {
    return 0;
  }
}

/** Every process of the service's sandboxes: hosts, workers, browsers and their helpers (bubblewrap's own too). */
export function sandboxPids(runtimeDir: string): number[] {
  return processesWith(runtimeDir);
}

/** CPU time (ms) the processes used so far, from /proc/<pid>/stat (utime + stime). */
export function cpuMs(pids: number[]): number {
  let ticks = 0;
  for (const pid of pids) {
    try {
      const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]?.split(" ") ?? [];
      ticks += Number(fields[11]) + Number(fields[12]);
    } catch {
      // ended
    }
  }
  return ticks * 10; // USER_HZ is 100 on Linux
}

/**
 * TCP sockets in LISTEN state that belong to these processes, read from /proc: their fds'
 * socket inodes, matched against the listening sockets of each process's network namespace.
 */
export function listeningSockets(pids: number[]): string[] {
  const found: string[] = [];
  for (const pid of pids) {
    const inodes = new Set<string>();
    try {
      for (const fd of readdirSync(`/proc/${pid}/fd`)) {
        const link = (() => {
          try {
            return readlinkSync(`/proc/${pid}/fd/${fd}`);
          } catch {
            return "";
          }
        })();
        const inode = /^socket:\[(\d+)\]$/.exec(link)?.[1];
        if (inode) inodes.add(inode);
      }
      for (const table of ["tcp", "tcp6"]) {
        for (const line of readFileSync(`/proc/${pid}/net/${table}`, "utf8").split("\n").slice(1)) {
          const columns = line.trim().split(/\s+/);
          if (columns[3] === "0A" && inodes.has(columns[9] ?? "")) found.push(`${pid} ${table} ${columns[1]}`);
        }
      }
    } catch {
      // ended meanwhile
    }
  }
  return found;
}

/**
 * An automation that tries to read `file` through file:// and to download into `dir`, after a
 * control download into /tmp that shows downloads work (each answer's download states listed).
 */
export const FILE_READER = `import { Session } from "browserfn/runtime";
export default async function run(file: string, dir: string, controlName: string) {
  await using session = await Session.start();
  const page = await session.newPage();
  let read: string;
  try { await page.goto("file://" + file); read = await page.content(); } catch (error) { read = "error: " + (error as Error).message; }
  const cdp = await page.createCDPSession();
  const { targetInfo } = (await cdp.send("Target.getTargetInfo")) as any;
  const states: Record<string, string> = {};
  cdp.on("Browser.downloadProgress", (event: any) => { states[event.guid] = event.state; });
  const plant = async (into: string, name: string) => {
    for (const key of Object.keys(states)) delete states[key];
    try { await cdp.send("Browser.setDownloadBehavior", { behavior: "allow", downloadPath: into, browserContextId: targetInfo.browserContextId, eventsEnabled: true } as any); }
    catch (error) { return "refused: " + (error as Error).message; }
    await page.setContent('<a id="d" href="data:text/plain,stolen" download="' + name + '">d</a>');
    await page.evaluate(() => (document.getElementById("d") as any).click());
    await new Promise((r) => setTimeout(r, 1500));
    return "allowed " + JSON.stringify(Object.values(states));
  };
  const control = await plant("/tmp", controlName);
  const download = await plant(dir, "planted.txt");
  return { read, control, download };
}`;

/** Pids ordered by start time, oldest first: a sandbox's current worker before its standby (started after its run began). */
export function oldestFirst(pids: number[]): number[] {
  const started = (pid: number) => {
    try {
      return Number(readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]?.split(" ")[19]);
    } catch {
      return Number.POSITIVE_INFINITY;
    }
  };
  return [...pids].sort((a, b) => started(a) - started(b) || a - b);
}
