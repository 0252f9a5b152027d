import { type ChildProcess, spawn } from "node:child_process";
import { chown, mkdir, realpath, rm } from "node:fs/promises";
import { networkInterfaces } from "node:os";
import path from "node:path";
import type { Readable, Writable } from "node:stream";
import type { Socket } from "node:net";
import type { BrowserSpec } from "../../../runner/protocol";
import { processTreeMb } from "../processTree";
import { WorkerCgroup } from "./cgroup";
import { type ChromiumFiles, chromiumArgs, chromiumEnv } from "./chromium";
import type { Sandbox } from "./sandbox";

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
  alive(): boolean;
  readonly exited: Promise<void>;
  /** Stops every process of the sandbox until `thaw` (between runs nothing of it runs). */
  freeze(): Promise<void>;
  thaw(): Promise<void>;
  /** Memory of every process of the sandbox (MB, proportional set size). */
  memoryMb(): Promise<number>;
  /** Sets the kernel's hard ceiling (cgroups only): a backstop above the sampled limit. */
  limitMemory(mb: number): Promise<void>;
  hitMemoryLimit(): Promise<boolean>;
  /** Kills every process of the sandbox and removes what it left; resolves once all are gone. */
  kill(): Promise<void>;
}

/** Size caps of a namespaces sandbox's private file systems. */
const TMP_BYTES = 512 * 1024 * 1024;
const SHM_BYTES = 256 * 1024 * 1024;
const RUNTIME_BYTES = 512 * 1024 * 1024;
const START_TIMEOUT_MS = 20_000;

/** Destinations no sandbox reaches unless the local network is allowed (besides the host's own addresses). */
const BLOCKED_NETWORKS = [
  "0.0.0.0/8",
  "10.0.0.0/8",
  "100.64.0.0/10",
  "169.254.0.0/16",
  "172.16.0.0/12",
  "192.0.0.0/24",
  "192.168.0.0/16",
  "198.18.0.0/15",
  "224.0.0.0/4",
  "240.0.0.0/4",
];

/** Read-only system paths a sandbox needs (node, Chromium's libraries, certificates, fonts). */
const SYSTEM_PATHS = ["/usr", "/lib", "/lib64", "/lib32", "/bin", "/sbin"];
const ETC_PATHS = [
  "/etc/ssl",
  "/etc/ca-certificates",
  "/etc/fonts",
  "/etc/ld.so.cache",
  "/etc/ld.so.conf",
  "/etc/ld.so.conf.d",
  "/etc/localtime",
  "/etc/nsswitch.conf",
  "/etc/alternatives",
  "/etc/mime.types",
];

/**
 * Starts one worker's sandbox with its host running in it: in `namespaces` mode a bubblewrap
 * sandbox (own user, PID, mount, IPC, UTS and network namespaces, a read-only view of only
 * what it needs, private size-capped tmpfs, no data dir) whose only way out is slirp4netns
 * with the host's loopback and private networks unreachable; in `process` mode the host as a
 * plain process. Either way under a uid of its own when the service runs as root, in cgroups
 * when the machine has them, in a process group of its own.
 */
export async function startSandboxedHost(sandbox: Sandbox, files: RuntimeFiles, id: string, uid: number | undefined): Promise<SandboxedHost> {
  const profileDir = path.join(files.runtimeDir, `profile-${id}`);
  const home = sandbox.mode === "namespaces" ? "/tmp" : profileDir;
  const browser: BrowserSpec = {
    executable: files.chromium.executable,
    args: chromiumArgs(),
    env: chromiumEnv(files.chromium, home),
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
  try {
    const identity = uid === undefined ? {} : { uid, gid: uid };
    if (sandbox.mode === "process") {
      child = quietPipes(spawn(process.execPath, [files.hostBundle], { ...identity, detached: true, env: {}, stdio: ["ignore", "ignore", "ignore", "pipe"] }));
      await cgroup?.add(child.pid as number);
    } else {
      child = quietPipes(
        spawn(sandbox.tools.bwrap, await bwrapArgs(sandbox, files), {
          ...identity,
          detached: true,
          env: {},
          stdio: ["ignore", "ignore", "pipe", "pipe", "pipe", "pipe"],
        }),
      );
      const inner = await sandboxPid(child);
      await cgroup?.add(child.pid as number, inner);
      if (!sandbox.allowLocalNetwork) cleanups.push(await connectNetwork(sandbox, inner, process.getuid?.() === 0));
      (child.stdio[5 as number] as Writable).end("go");
    }
  } catch (error) {
    if (child?.pid && child.exitCode === null && child.signalCode === null) killGroup(child.pid);
    for (const cleanup of cleanups.reverse()) await cleanup().catch(() => undefined);
    throw error;
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
  return {
    channel: started.stdio[3] as Socket,
    browser,
    workerBundle: files.workerBundle,
    alive: () => started.exitCode === null && started.signalCode === null && !killing,
    exited,
    // The whole process group: bubblewrap, the host, the worker, the browser and its helpers.
    freeze: async () => signal("SIGSTOP"),
    thaw: async () => signal("SIGCONT"),
    memoryMb: () => processTreeMb(pid),
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

/** A child's pipes report resets when it dies; its exit is what counts, so they are ignored. */
function quietPipes(child: ChildProcess): ChildProcess {
  for (const stream of child.stdio) stream?.on("error", () => undefined);
  return child;
}

function signalGroup(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pid, signal);
  } catch {
    // the group is gone
  }
}

function killGroup(pid: number): void {
  signalGroup(pid, "SIGKILL");
}

/** bubblewrap's arguments: what the sandbox sees, and the host as its command. */
async function bwrapArgs(sandbox: Sandbox, files: RuntimeFiles): Promise<string[]> {
  const ro = (source: string, target = source) => ["--ro-bind-try", source, target];
  const node = await realpath(process.execPath);
  const nodeDir = path.dirname(node);
  const underSystem = SYSTEM_PATHS.some((dir) => nodeDir === dir || nodeDir.startsWith(`${dir}/`));
  return [
    "--unshare-all",
    "--unshare-user",
    ...(sandbox.allowLocalNetwork ? ["--share-net"] : []),
    "--die-with-parent",
    "--disable-userns",
    "--uid", "1000",
    "--gid", "1000",
    "--hostname", "browserfn",
    ...SYSTEM_PATHS.flatMap((dir) => ro(dir)),
    ...(underSystem ? [] : ro(nodeDir)),
    ...ETC_PATHS.flatMap((file) => ro(file)),
    ...ro(path.join(files.etcDir, "resolv.conf"), "/etc/resolv.conf"),
    ...ro(path.join(files.etcDir, "hosts"), "/etc/hosts"),
    ...ro(path.join(files.etcDir, "passwd"), "/etc/passwd"),
    ...ro(path.join(files.etcDir, "group"), "/etc/group"),
    "--proc", "/proc",
    "--dev", "/dev",
    "--size", String(SHM_BYTES), "--tmpfs", "/dev/shm",
    "--size", String(TMP_BYTES), "--tmpfs", "/tmp",
    "--size", String(RUNTIME_BYTES), "--tmpfs", files.runtimeDir,
    ...ro(files.hostBundle),
    ...ro(files.workerBundle),
    // Chromium at the path the service unpacked it to, over the private /tmp if it is there.
    ...ro(files.chromium.executable),
    ...files.chromium.files.flatMap((file) => ro(file)),
    "--clearenv",
    "--setenv", "PATH", "/usr/bin:/bin",
    "--setenv", "HOME", "/tmp",
    "--chdir", "/tmp",
    "--info-fd", "4",
    "--block-fd", "5",
    "--",
    node,
    files.hostBundle,
  ];
}

/** The pid (as this service sees it) of the sandbox's first process, from bubblewrap's --info-fd. */
function sandboxPid(child: ChildProcess): Promise<number> {
  return new Promise((resolve, reject) => {
    let text = "";
    let stderr = "";
    const timer = setTimeout(() => fail(new Error("the sandbox did not start in time")), START_TIMEOUT_MS);
    const info = child.stdio[4 as number] as Readable;
    (child.stdio[2] as Readable).on("data", (chunk: Buffer) => (stderr = (stderr + chunk.toString("utf8")).slice(-2000)));
    const onData = (chunk: Buffer) => {
      text += chunk.toString("utf8");
      const match = /"child-pid"\s*:\s*(\d+)/.exec(text);
      if (match) {
        done();
        resolve(Number(match[1]));
      }
    };
    const onExit = (code: number | null) => fail(new Error(`bubblewrap exited (${code}) before the sandbox started: ${stderr.trim()}`));
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

/**
 * Gives the sandbox's network namespace its way out: slirp4netns (user-mode NAT, host
 * loopback refused), then routes that make private, link-local and the host's own addresses
 * unreachable. Returns what stops it again.
 */
async function connectNetwork(sandbox: Sandbox, pid: number, asRoot: boolean): Promise<() => Promise<void>> {
  // fd 3: slirp4netns says "1" when the network is up; fd 4: closing it (or this process dying) stops slirp4netns.
  const slirp = quietPipes(spawn(
    sandbox.tools.slirp4netns,
    [
      "--configure",
      "--mtu=65520",
      "--disable-host-loopback",
      "--ready-fd=3",
      "--exit-fd=4",
      // By path: joining by pid enters the sandbox's user namespace first, where root may not set its network.
      ...(asRoot ? [] : [`--userns-path=/proc/${pid}/ns/user`]),
      "--netns-type=path",
      `/proc/${pid}/ns/net`,
      "tap0",
    ],
    { stdio: ["ignore", "ignore", "pipe", "pipe", "pipe"] },
  ));
  const stop = async () => {
    if (slirp.exitCode !== null || slirp.signalCode !== null) return;
    const gone = new Promise((resolve) => slirp.once("exit", resolve));
    slirp.kill("SIGKILL");
    await gone;
  };
  try {
    await new Promise<void>((resolve, reject) => {
      let stderr = "";
      const timer = setTimeout(() => reject(new Error("slirp4netns did not configure the network in time")), START_TIMEOUT_MS);
      (slirp.stdio[2] as Readable).on("data", (chunk: Buffer) => (stderr = (stderr + chunk.toString("utf8")).slice(-2000)));
      (slirp.stdio[3 as number] as Readable).once("data", () => {
        clearTimeout(timer);
        resolve();
      });
      slirp.once("exit", (code) => {
        clearTimeout(timer);
        reject(new Error(`slirp4netns exited (${code}): ${stderr.trim()}`));
      });
    });
    const hostAddresses = Object.values(networkInterfaces())
      .flat()
      .filter((address) => address && address.family === "IPv4" && !address.internal)
      .map((address) => `${address?.address}/32`);
    const routes = [...BLOCKED_NETWORKS, ...hostAddresses].map((cidr) => `route add unreachable ${cidr}`).join("\n");
    const enter = asRoot ? [`--net=/proc/${pid}/ns/net`] : [`--user=/proc/${pid}/ns/user`, "--preserve-credentials", `--net=/proc/${pid}/ns/net`];
    await run(sandbox.tools.nsenter, [...enter, sandbox.tools.ip, "-batch", "-"], `${routes}\n`);
  } catch (error) {
    await stop();
    throw error;
  }
  return stop;
}

function run(command: string, args: string[], input: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { stdio: ["pipe", "ignore", "pipe"] });
    let stderr = "";
    child.stderr?.on("data", (chunk: Buffer) => (stderr += chunk.toString("utf8")));
    child.once("error", reject);
    child.once("exit", (code) => (code === 0 ? resolve() : reject(new Error(`${path.basename(command)} ${args.join(" ")}: exit ${code}: ${stderr.trim()}`))));
    child.stdin?.end(input);
  });
}
