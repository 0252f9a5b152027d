import { type ChildProcess, spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { chown, mkdir, rm } from "node:fs/promises";
import path from "node:path";
import type { Readable, Writable } from "node:stream";
import type { Socket } from "node:net";
import type { BrowserSpec } from "../../../runner/protocol";
import { keepTail } from "../../../runner/streamTail";
import { EXACT_EVERY_MS, TreeMeter } from "../processTree";
import { bwrapArgs } from "./bwrapArgs";
import { WorkerCgroup } from "./cgroup";
import { quietPipes } from "./childPipes";
import { type ChromiumFiles, chromiumArgs, chromiumEnv } from "./chromium";
import type { Sandbox } from "./sandbox";
import { awaitSandboxMounts, sandboxFilesMb, sandboxMounts, tmpfsBytes } from "./sandboxFiles";
import { connectNetwork } from "./sandboxNetwork";

/** Puts a sandbox's first processes under its account's CPU share (cpuShares/); resolves to its release. */
export type CpuPlacement = (pids: readonly number[]) => Promise<() => Promise<void>>;

/** The service's runtime files a sandbox sees (read-only). */
export interface RuntimeFiles {
  /** Holds the bundles; inside a namespaces sandbox the same path is a private tmpfs. */
  runtimeDir: string;
  hostBundle: string;
  workerBundle: string;
  /** Small files made for sandboxes (resolv.conf, hosts). */
  etcDir: string;
  chromium: ChromiumFiles;
}

/** A worker's sandbox, from outside: its host's channel and what the service does to it. */
export interface SandboxedHost {
  /** The host's fd 3: frames both ways. */
  channel: Socket;
  browser: BrowserSpec;
  workerBundle: string;
  /** What the host empties after each run (HostInit.scratchDirs). */
  scratchDirs: string[];
  alive(): boolean;
  readonly exited: Promise<void>;
  /** Stops every process of the sandbox until `thaw` (between runs nothing of it runs). */
  freeze(): Promise<void>;
  thaw(): Promise<void>;
  /**
   * Memory of the sandbox (MB): the proportional set size of every process of it (`exactly`:
   * no estimate, see TreeMeter) and what its file systems hold (filesMb).
   */
  memoryMb(exactly?: boolean): Promise<number>;
  /** Leaves the process `pid` (as the sandbox's host sees it; 0: none) out of memoryMb from now on: the host's standby worker. */
  excludeFromMemory(pid: number): void;
  /** What the sandbox's private file systems hold (MB; namespaces only, 0 in process mode). */
  filesMb(): number;
  /** Sets the kernel's hard ceiling (cgroups only): a backstop above the sampled limit. */
  limitMemory(mb: number): Promise<void>;
  hitMemoryLimit(): Promise<boolean>;
  /** Kills every process of the sandbox and removes what it left; resolves once all are gone. */
  kill(): Promise<void>;
}

const START_TIMEOUT_MS = 20_000;

/**
 * A sandbox that failed in its own start, not for a setting or a tool that is missing: bubblewrap
 * exited once the sandbox existed (its loopback's "Failed RTM_NEWADDR" under heavy churn), or the
 * sandbox ended while a start step ran (its network's tools then find no namespace to join). The
 * kernel's namespace setup can fail so for a moment: the worker's start tries once more on it.
 */
export class SandboxStartFailure extends Error {
  override readonly name = "SandboxStartFailure";
}

/**
 * Hosts started by this process, by every service in it: the number names a host's cgroup and
 * profile, which must never be another live host's (a group is emptied with SIGKILL when its
 * host ends: a name shared by two services' hosts killed the other's worker and browser).
 */
let hostsStarted = 0;

/**
 * Starts one worker's sandbox with its host running in it: in `namespaces` mode a bubblewrap
 * sandbox (own user, PID, mount, IPC, UTS and network namespaces, a read-only view of only
 * what it needs, private tmpfs of `memoryMb` each, no data dir) whose only way out is
 * slirp4netns with the host's loopback, links and private networks unreachable; in `process`
 * mode the host as a plain process. Either way under a uid of its own when the service runs as
 * root, in cgroups when the machine has them, under its account's CPU share (`placeCpu`), in
 * a process group of its own.
 */
export async function startSandboxedHost(
  sandbox: Sandbox,
  files: RuntimeFiles,
  uid: number | undefined,
  memoryMb: number,
  placeCpu?: CpuPlacement,
): Promise<SandboxedHost> {
  const id = `${process.pid}-${++hostsStarted}`;
  const profileDir = path.join(files.runtimeDir, `profile-${id}`);
  const browser: BrowserSpec = {
    executable: files.chromium.executable,
    args: chromiumArgs(),
    // HOME and TMPDIR in the profile: the browser's own files there, /tmp is the run's scratch.
    env: chromiumEnv(files.chromium, profileDir),
    profileDir,
    // Only where the browser shares the machine's files: in namespaces it sees none of the service's.
    guard: sandbox.mode === "process",
  };
  const cgroup = sandbox.cgroups ? await WorkerCgroup.create(id) : undefined;
  const cleanups: (() => Promise<void>)[] = [];
  if (cgroup) cleanups.push(() => cgroup.destroy());
  if (sandbox.mode === "process") {
    await mkdir(profileDir, { mode: 0o700 });
    if (uid !== undefined) await chown(profileDir, uid, uid);
    cleanups.push(() => rm(profileDir, { recursive: true, force: true }));
  }
  let child: ChildProcess | undefined;
  /** The sandbox's first process, once bubblewrap said it. */
  let inner: number | undefined;
  let filesMb = () => 0;
  try {
    const identity = uid === undefined ? {} : { uid, gid: uid };
    if (sandbox.mode === "process") {
      child = quietPipes(spawn(process.execPath, [files.hostBundle], { ...identity, detached: true, env: {}, stdio: ["ignore", "ignore", "ignore", "pipe"] }));
      await cgroup?.add(child.pid as number);
      if (placeCpu) cleanups.unshift(await placeCpu([child.pid as number])); // released last, once every process is gone
    } else {
      child = quietPipes(
        spawn(sandbox.tools.bwrap, await bwrapArgs(sandbox, files, tmpfsBytes(memoryMb)), {
          ...identity,
          detached: true,
          env: {},
          stdio: ["ignore", "ignore", "pipe", "pipe", "pipe", "pipe"],
        }),
      );
      inner = await sandboxPid(child);
      await cgroup?.add(child.pid as number, inner);
      // Before the sandbox goes on: everything it starts is born in its account's share.
      if (placeCpu) cleanups.unshift(await placeCpu([child.pid as number, inner])); // released last, once every process is gone
      if (!sandbox.allowLocalNetwork) cleanups.push(await connectNetwork(sandbox, inner, process.getuid?.() === 0, placeCpu));
      (child.stdio[5 as number] as Writable).end("go");
      // Readable from here, or the sandbox does not start: what its files hold must count.
      const mounts = sandboxMounts(files.runtimeDir);
      const started = child;
      const sandboxed = inner;
      const stderr = keepTail(started.stdio[2]);
      await awaitSandboxMounts(sandboxed, mounts, tmpfsBytes(memoryMb), START_TIMEOUT_MS, () => {
        if (started.exitCode !== null || started.signalCode !== null) throw new SandboxStartFailure(`bubblewrap exited (${started.exitCode ?? started.signalCode}) as the sandbox started: ${stderr()}`);
      });
      filesMb = () => {
        try {
          return sandboxFilesMb(sandboxed, mounts);
        } catch {
          return 0; // the sandbox is gone, and its files with it
        }
      };
    }
  } catch (error) {
    // A step that failed because the sandbox had already ended (its network's tools find no
    // namespace to join) says so: a sandbox that ended as it started is worth another try.
    const ended = !(error instanceof SandboxStartFailure) && inner !== undefined && !processRunning(inner);
    if (child?.pid && child.exitCode === null && child.signalCode === null) signalGroup(child.pid, "SIGKILL");
    for (const cleanup of cleanups.reverse()) await cleanup().catch(() => undefined);
    throw ended ? new SandboxStartFailure(`the sandbox ended as it started: ${(error as Error).message}`) : error;
  }
  const started = child;
  const pid = started.pid as number;
  // Once it is reaped its pid (and so its group's id) can be another process's: no signal after that.
  let reaped = started.exitCode !== null || started.signalCode !== null;
  const exited = new Promise<void>((resolve) => {
    if (reaped) resolve();
    else
      started.once("exit", () => {
        reaped = true;
        resolve();
      });
  });
  const signal = (name: NodeJS.Signals) => {
    if (!reaped) signalGroup(pid, name);
  };
  let killing: Promise<void> | undefined;
  // One meter for the sandbox's life: its exact reads are spread over its runs (TreeMeter).
  // Its processes are its cgroup's when it has one (a read of one file, not of the machine's process table).
  const meter = new TreeMeter(pid, EXACT_EVERY_MS, undefined, cgroup ? () => cgroup.pidsNow() : undefined);
  return {
    channel: started.stdio[3] as Socket,
    browser,
    workerBundle: files.workerBundle,
    scratchDirs: sandbox.mode === "namespaces" ? sandboxMounts(files.runtimeDir) : [],
    alive: () => started.exitCode === null && started.signalCode === null && !killing,
    exited,
    // The whole process group: bubblewrap, the host, the worker, the browser and its helpers.
    freeze: async () => signal("SIGSTOP"),
    thaw: async () => signal("SIGCONT"),
    memoryMb: async (exactly) => (await meter.sample(exactly)) + filesMb(),
    filesMb: () => filesMb(),
    excludeFromMemory: (inner) => meter.exclude(inner),
    limitMemory: async (mb) => cgroup?.limitMemory(mb),
    hitMemoryLimit: async () => (cgroup ? cgroup.hitMemoryLimit() : false),
    kill: () => {
      killing ??= (async () => {
        signal("SIGKILL");
        await exited;
        for (const cleanup of cleanups.reverse()) await cleanup().catch(() => undefined);
      })();
      return killing;
    },
  };
}

function signalGroup(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pid, signal);
  } catch {
    // the group is gone
  }
}

/** Whether process `pid` is there and not ended (a zombie, ended but not yet reaped, is not). */
export function processRunning(pid: number): boolean {
  try {
    return readFileSync(`/proc/${pid}/stat`, "utf8").split(") ").pop()?.[0] !== "Z";
  } catch {
    return false;
  }
}

/** The pid (as this service sees it) of the sandbox's first process, from bubblewrap's --info-fd. */
function sandboxPid(child: ChildProcess): Promise<number> {
  return new Promise((resolve, reject) => {
    let text = "";
    const timer = setTimeout(() => fail(new Error("the sandbox did not start in time")), START_TIMEOUT_MS);
    const info = child.stdio[4 as number] as Readable;
    const stderr = keepTail(child.stdio[2]);
    const onData = (chunk: Buffer) => {
      text += chunk.toString("utf8");
      const match = /"child-pid"\s*:\s*(\d+)/.exec(text);
      if (match) {
        done();
        resolve(Number(match[1]));
      }
    };
    const onExit = (code: number | null) => fail(new Error(`bubblewrap exited (${code}) before the sandbox started: ${stderr()}`));
    const done = () => {
      clearTimeout(timer);
      info.off("data", onData);
      child.off("exit", onExit);
    };
    const fail = (error: Error) => {
      done();
      reject(error);
    };
    info.on("data", onData);
    child.once("exit", onExit);
    child.once("error", fail);
  });
}

