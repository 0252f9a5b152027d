import { type ChildProcess, spawn } from "node:child_process";
import { chmod, chown, mkdtemp, readdir, rm } from "node:fs/promises";
import path from "node:path";
import chromium from "@sparticuz/chromium";
import type { ProcessIdentity } from "./unprivilegedUser";

export interface BrowserProcess {
  wsEndpoint: string;
  /** Process group id: Chromium and all its helpers. */
  pid: number;
  /** False once Chromium has exited. */
  alive(): boolean;
  /** Kills the whole browser process group and removes its profile directory. */
  kill(): Promise<void>;
}

const LAUNCH_TIMEOUT_MS = 30_000;

let executable: Promise<string> | undefined;

/**
 * The @sparticuz/chromium binary, decompressed once per service. When the service runs as
 * root and the browser as `nobody`, the extracted files are made readable for it.
 */
export function chromiumExecutable(identity: ProcessIdentity): Promise<string> {
  executable ??= (async () => {
    const file = await chromium.executablePath();
    if (identity.uid !== undefined) {
      await chmod(file, 0o755);
      const locales = path.join(path.dirname(file), "locales");
      await chmod(locales, 0o755).catch(() => undefined);
      for (const name of await readdir(locales).catch(() => [] as string[])) {
        await chmod(path.join(locales, name), 0o644);
      }
    }
    return file;
  })();
  return executable;
}

/** Chromium's flags: @sparticuz/chromium's defaults without `--single-process` (it breaks contexts). */
export function chromiumArgs(): string[] {
  return [
    ...chromium.args.filter((arg) => arg !== "--single-process"),
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
  ];
}

/**
 * Launches a browser for one worker, as the worker's user, in its own process group,
 * and returns its DevTools endpoint: the worker connects to it and needs no right to start processes.
 */
export async function launchBrowser(identity: ProcessIdentity, profileRoot: string): Promise<BrowserProcess> {
  const file = await chromiumExecutable(identity);
  const profile = await mkdtemp(path.join(profileRoot, "profile-"));
  if (identity.uid !== undefined && identity.gid !== undefined) await chown(profile, identity.uid, identity.gid);
  const child = spawn(file, [...chromiumArgs(), "--remote-debugging-port=0", `--user-data-dir=${profile}`, "about:blank"], {
    ...identity,
    detached: true,
    stdio: ["ignore", "ignore", "pipe"],
    env: { HOME: profile, TMPDIR: profile, FONTCONFIG_PATH: "/tmp/fonts" },
  });
  const cleanup = async () => {
    killGroup(child);
    await rm(profile, { recursive: true, force: true }).catch(() => undefined);
  };
  try {
    const wsEndpoint = await devtoolsEndpoint(child);
    child.stderr?.resume();
    return {
      wsEndpoint,
      pid: child.pid ?? -1,
      alive: () => child.exitCode === null && child.signalCode === null,
      kill: cleanup,
    };
  } catch (error) {
    await cleanup();
    throw error;
  }
}

function devtoolsEndpoint(child: ChildProcess): Promise<string> {
  return new Promise((resolve, reject) => {
    let output = "";
    const timer = setTimeout(() => fail(new Error(`Chromium did not start within ${LAUNCH_TIMEOUT_MS} ms`)), LAUNCH_TIMEOUT_MS);
    const onData = (chunk: Buffer) => {
      output += chunk.toString("utf8");
      const match = /DevTools listening on (ws:\/\/\S+)/.exec(output);
      if (match?.[1]) {
        done();
        resolve(match[1]);
      }
    };
    const onExit = (code: number | null) => fail(new Error(`Chromium exited (${code}) before it was ready: ${output.slice(-2000)}`));
    const done = () => {
      clearTimeout(timer);
      child.stderr?.off("data", onData);
      child.off("exit", onExit);
    };
    const fail = (error: Error) => {
      done();
      reject(error);
    };
    child.stderr?.on("data", onData);
    child.once("exit", onExit);
    child.once("error", (error) => fail(error));
  });
}

function killGroup(child: ChildProcess): void {
  if (child.pid === undefined || child.exitCode !== null) return;
  try {
    process.kill(-child.pid, "SIGKILL");
  } catch {
    child.kill("SIGKILL");
  }
}
