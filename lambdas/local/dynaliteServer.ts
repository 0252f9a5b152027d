import { spawn } from "node:child_process";
import path from "node:path";

export interface DynaliteServer {
  endpoint: string;
  close(): Promise<void>;
}

const START_TIMEOUT_MS = 20_000;

/**
 * A DynamoDB-API server (dynalite) on an ephemeral loopback port, in a child process of
 * its own, persisting under `dataPath` (in memory when null). It ends with the service.
 */
export async function startDynalite(dataPath: string | null): Promise<DynaliteServer> {
  const child = spawn(process.execPath, [path.join(__dirname, "dynaliteChild.cjs"), ...(dataPath ? [dataPath] : [])], {
    stdio: ["ignore", "ignore", "inherit", "ipc"],
    env: { PATH: process.env.PATH ?? "" },
  });
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  const port = await new Promise<number>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error("dynalite did not start in time")), START_TIMEOUT_MS);
    child.once("message", (message: { type: string; port?: number; message?: string }) => {
      clearTimeout(timer);
      if (message.type === "listening" && message.port) resolve(message.port);
      else reject(new Error(`dynalite failed to start: ${message.message ?? "unknown error"}`));
    });
    child.once("exit", (code) => {
      clearTimeout(timer);
      reject(new Error(`dynalite exited during start-up (code ${code})`));
    });
  }).catch(async (error: unknown) => {
    child.kill("SIGKILL");
    await exited;
    throw error;
  });
  return {
    endpoint: `http://127.0.0.1:${port}`,
    close: async () => {
      if (child.exitCode === null && child.signalCode === null) child.kill("SIGTERM");
      await exited;
    },
  };
}
