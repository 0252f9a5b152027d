import { type ChildProcess, spawn } from "node:child_process";
import { existsSync } from "node:fs";
import path from "node:path";

const ROOT = path.resolve(__dirname, "../..");

export interface ChildService {
  url: string;
  child: ChildProcess;
  /** Everything it printed so far (stdout and stderr). */
  output(): string;
  /** SIGKILL, and waits until it is gone. */
  kill(): Promise<void>;
  /** SIGTERM (a clean shutdown), and waits for the exit code. */
  stop(): Promise<number | null>;
}

/**
 * The service as `npm start` runs it, in a child process of its own (one process: node running
 * bin/start.cjs, which loads the bundle dist/local.cjs, built first if a source is newer; no
 * wrapper, so a signal hits the service itself), on a free port. A checkout from before the
 * bundles (a bench's baseline) runs its sources through tsx, as its `npm start` did.
 */
export async function startChildService(
  dataDir: string,
  key: string,
  env: Record<string, string> = {},
  /** Another user to run it as (the test runs as root). */
  uid?: number,
  /** Another checkout to run (a bench's baseline); default this one. */
  root: string = ROOT,
): Promise<ChildService> {
  const args = existsSync(path.join(root, "bin", "start.cjs")) ? ["bin/start.cjs"] : ["--require", "tsx/cjs", "bin/local.ts"];
  const child = spawn(process.execPath, args, {
    cwd: root,
    ...(uid === undefined ? {} : { uid, gid: uid }),
    env: { ...process.env, PORT: "0", BROWSERFN_DATA_DIR: dataDir, BROWSERFN_BOOTSTRAP_KEY: key, BROWSERFN_REQUEST_LOG: "0", ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  child.stdout?.on("data", (chunk) => (output += chunk));
  child.stderr?.on("data", (chunk) => (output += chunk));
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
  let url: string | undefined;
  for (let i = 0; i < 1200 && !url && child.exitCode === null; i++) {
    url = /serving (http:\/\/127\.0\.0\.1:\d+)/.exec(output)?.[1];
    if (!url) await new Promise((resolve) => setTimeout(resolve, 50));
  }
  if (!url) {
    child.kill("SIGKILL");
    await exited;
    throw new Error(`the service did not start: ${output}`);
  }
  return {
    url,
    child,
    output: () => output,
    kill: async () => {
      if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
      await exited;
    },
    stop: async () => {
      if (child.exitCode === null && child.signalCode === null) child.kill("SIGTERM");
      return exited;
    },
  };
}
