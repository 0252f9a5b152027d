/**
 * A bench's hostile peers (deployers, callers, webhook receivers) run on this machine only because
 * the bench has one machine: in real life the attacker's client is elsewhere, and its CPU is not
 * the service's. `asRemotePeer` puts such a process where it takes the CPU from nothing the
 * figure measures: a cgroup v1 cpu group marked `cpu.idle` (as root where cgroup v1's cpu
 * controller is mounted), else nice 19. It still sends as fast as the service answers whenever a
 * core is free (two cores here: nearly always).
 */
import { type ChildProcess, spawn } from "node:child_process";
import { access, mkdir, writeFile } from "node:fs/promises";
import { setPriority } from "node:os";
import path from "node:path";

const GROUP = "/sys/fs/cgroup/cpu/browserfn-bench-peers";

/** Where `pid`'s process (every thread) went: "cpu.idle group" or "nice 19". */
export async function asRemotePeer(pid: number): Promise<"cpu.idle group" | "nice 19"> {
  try {
    await access(path.dirname(GROUP));
    await mkdir(GROUP, { recursive: true });
    await writeFile(path.join(GROUP, "cpu.idle"), "1");
    await writeFile(path.join(GROUP, "cgroup.procs"), String(pid));
    return "cpu.idle group";
  } catch {
    setPriority(pid, 19);
    return "nice 19";
  }
}

/**
 * Starts `script` (a file of bench/, run as this process runs, with `args`) as a remote peer: its
 * stdout piped, an IPC channel, stderr inherited. `placed` settles once it is where asRemotePeer
 * put it.
 */
export function startRemotePeer(script: string, args: readonly string[]): { child: ChildProcess; placed: Promise<unknown> } {
  const child = spawn(process.execPath, [...process.execArgv, path.join(__dirname, script), ...args], { stdio: ["ignore", "pipe", "inherit", "ipc"] });
  return { child, placed: asRemotePeer(child.pid as number) };
}
