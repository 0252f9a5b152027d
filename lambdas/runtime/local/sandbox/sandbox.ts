import { execFile } from "node:child_process";
import { existsSync } from "node:fs";
import path from "node:path";
import { WorkerCgroup } from "./cgroup";
import { CPU_SHARES_HOWTO, cpuSharesKind } from "../cpuShares/chooseCpuShares";
import type { CpuSharesKind } from "../cpuShares/cpuShares";

export type SandboxSetting = "auto" | "namespaces" | "process";

/** A uid no account has, to try bubblewrap as a worker would run it (see WorkerUids). */
const PROBE_UID = 1_799_999_999;

/** How this service isolates runs, as chosen at start-up (shared/DESIGN.md, "The local sandbox"). */
export interface Sandbox {
  mode: "namespaces" | "process";
  /** Automations may reach the host's loopback and private networks (BROWSERFN_ALLOW_LOCAL_NETWORK). */
  allowLocalNetwork: boolean;
  /** Workers run under uids of their own (the service runs as root). */
  uidPerWorker: boolean;
  /** cgroup v1 memory and pids groups per worker (root only). */
  cgroups: boolean;
  /** How accounts' sandboxes are weighed for CPU: a cgroup v1 cpu group per account (root), else nice levels (cpuShares/). */
  cpuShares: CpuSharesKind;
  /** Programs the namespaces mode runs. */
  tools: { bwrap: string; slirp4netns: string; nsenter: string; ip: string };
  /** Why the namespaces mode is not used (process mode), for the start-up line. */
  fallbackReason: string | null;
}

/** The one command that gives a Debian machine what the namespaces mode needs. */
export const NAMESPACES_INSTALL = "sudo apt-get install bubblewrap slirp4netns iproute2";

function which(name: string, searchPath: string): string | null {
  for (const dir of searchPath.split(":")) {
    const file = path.join(dir, name);
    if (dir && existsSync(file)) return file;
  }
  return null;
}

/** Why bubblewrap cannot make a sandbox here, or null when it can (a real try, as the worker uid would). */
/** Tried asynchronously: the start-up's other half (dynalite, the store's tables) goes on meanwhile. */
function bwrapProblem(bwrap: string, uid: number | undefined): Promise<string | null> {
  return new Promise((resolve) => {
    execFile(
      bwrap,
      ["--unshare-all", "--die-with-parent", "--ro-bind", "/", "/", "--proc", "/proc", "--dev", "/dev", "true"],
      { uid, gid: uid, timeout: 10_000, encoding: "utf8" },
      (error, _stdout, stderr) => {
        if (!error) return resolve(null);
        const code = typeof error.code === "number" ? `exit ${error.code}` : error.message;
        resolve(`bubblewrap could not create namespaces: ${(stderr || code).trim()}`);
      },
    );
  });
}

/**
 * Chooses the sandbox: `namespaces` when bubblewrap (and, unless the local network is
 * allowed, slirp4netns and iproute2) are installed and user namespaces work; else `process`
 * for `auto`, and an error for `namespaces`.
 */
export async function chooseSandbox(setting: SandboxSetting, allowLocalNetwork: boolean, options: { searchPath?: string } = {}): Promise<Sandbox> {
  const root = process.getuid?.() === 0;
  // ip and nsenter live in sbin, which a user's PATH may leave out.
  const searchPath = options.searchPath ?? `${process.env.PATH ?? "/usr/local/bin:/usr/bin:/bin"}:/usr/local/sbin:/usr/sbin:/sbin`;
  const find = (name: string) => which(name, searchPath);
  const tools = { bwrap: find("bwrap"), slirp4netns: find("slirp4netns"), nsenter: find("nsenter"), ip: find("ip") };
  const cgroups = await WorkerCgroup.available();
  if (cgroups) await WorkerCgroup.removeStale();
  let problem: string | null = null;
  if (setting !== "process") {
    const needed = allowLocalNetwork ? (["bwrap"] as const) : (["bwrap", "slirp4netns", "nsenter", "ip"] as const);
    const missing = needed.filter((name) => !tools[name]);
    if (missing.length > 0) problem = `${missing.join(", ")} not found`;
    // Tried as a worker would run it: under a uid of its own when the service is root.
    else problem = await bwrapProblem(tools.bwrap as string, root ? PROBE_UID : undefined);
  } else {
    problem = "BROWSERFN_SANDBOX=process";
  }
  if (problem && setting === "namespaces") {
    throw new Error(`BROWSERFN_SANDBOX=namespaces, but ${problem}; install what it needs (${NAMESPACES_INSTALL}) or set BROWSERFN_SANDBOX=auto`);
  }
  return {
    mode: problem ? "process" : "namespaces",
    allowLocalNetwork,
    uidPerWorker: root,
    cgroups,
    cpuShares: await cpuSharesKind(),
    tools: { bwrap: tools.bwrap ?? "bwrap", slirp4netns: tools.slirp4netns ?? "slirp4netns", nsenter: tools.nsenter ?? "nsenter", ip: tools.ip ?? "ip" },
    fallbackReason: problem,
  };
}

/** One line for the start-up banner: the mode, and in process mode what it lacks and how to fix that. */
export function describeSandbox(sandbox: Sandbox): string {
  const network = sandbox.allowLocalNetwork ? "the host's network (BROWSERFN_ALLOW_LOCAL_NETWORK=true)" : "no host loopback or private networks";
  const extras = [sandbox.uidPerWorker ? "a uid per worker" : null, sandbox.cgroups ? "cgroup memory and pids limits" : null, describeCpuShares(sandbox.cpuShares)]
    .filter(Boolean)
    .join(", ");
  if (sandbox.mode === "namespaces") {
    return `Sandbox: namespaces (bubblewrap: own user, PID, mount, IPC and network namespaces; ${network}${extras ? `; ${extras}` : ""})`;
  }
  const why = sandbox.fallbackReason === "BROWSERFN_SANDBOX=process" ? "as set" : sandbox.fallbackReason;
  return (
    `Sandbox: process (${why}). WARNING: weaker isolation: runs share the host's network and file system view` +
    `${sandbox.uidPerWorker ? "" : ", under this user"}, kept from local files by a filter on the browser's protocol only; ` +
    `to isolate runs in namespaces: ${NAMESPACES_INSTALL}; ${describeCpuShares(sandbox.cpuShares)}`
  );
}

/** How accounts share the CPU, and what is missing for cgroups where only nice levels are used. */
function describeCpuShares(kind: CpuSharesKind): string {
  if (kind === "cgroup") return "equal CPU shares per account (a cgroup cpu group each)";
  return `CPU shares per account by nice level only (WARNING: an account with many busy runs gets more CPU than one with a single run; for a cgroup per account, ${CPU_SHARES_HOWTO})`;
}
