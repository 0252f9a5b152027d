import { type ChildProcess, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import path from "node:path";

export interface DynaliteServer {
  endpoint: string;
  /**
   * What every request to it must carry (header STORE_SECRET_HEADER): dynalite refuses any
   * other request with 403, so code that can reach loopback cannot read the store. Made anew
   * for each start, kept across restarts; it is in no command line or environment.
   */
  secret: string;
  /** The pid of the dynalite process serving now (a new one after each restart). */
  pid(): number | undefined;
  /** How many times dynalite was restarted after it died. */
  restarts(): number;
  close(): Promise<void>;
}

export interface DynaliteOptions {
  /** Where restarts are reported (default: stderr). */
  log?: (line: string) => void;
  /** First wait before a restart; it doubles per restart in a row, up to `maxBackoffMs`. */
  backoffMs?: number;
  maxBackoffMs?: number;
}

const START_TIMEOUT_MS = 20_000;
/** A dynalite that served this long counts as healthy: the next restart waits the first backoff again. */
const HEALTHY_AFTER_MS = 30_000;

/**
 * A DynamoDB-API server (dynalite) on an ephemeral loopback port, in a child process of
 * its own, persisting under `dataPath` (in memory when null). It ends with the service.
 *
 * With a `dataPath` it is supervised: when the process dies unexpectedly it is started
 * again on the same port and data, after a backoff that grows while it keeps dying. Store
 * calls made meanwhile fail with connection errors, which the API answers as 503
 * `service_unavailable` (see isStoreUnavailable). An in-memory dynalite is not restarted:
 * its data died with it.
 *
 * dynalite serves only requests that carry `secret` (see dynaliteChild.cjs), which each of
 * its processes gets as its first IPC message.
 */
export async function startDynalite(dataPath: string | null, options: DynaliteOptions = {}): Promise<DynaliteServer> {
  const log = options.log ?? ((line: string) => console.error(line));
  const firstBackoff = options.backoffMs ?? 250;
  const maxBackoff = options.maxBackoffMs ?? 5_000;
  const secret = randomBytes(32).toString("base64url");
  let current = await spawnDynalite(dataPath, 0, secret);
  const port = current.port;
  let closing = false;
  let restarts = 0;
  let backoff = firstBackoff;
  let timer: NodeJS.Timeout | undefined;
  let restarting: Promise<void> | undefined;

  const supervise = (running: Running) => {
    const startedAt = Date.now();
    void running.exited.then(({ code, signal }) => {
      if (closing || !dataPath) return;
      if (Date.now() - startedAt > HEALTHY_AFTER_MS) backoff = firstBackoff;
      log(`dynalite exited unexpectedly (${signal ?? `code ${code}`}); restarting it in ${backoff} ms`);
      scheduleRestart();
    });
  };
  const scheduleRestart = () => {
    const wait = backoff;
    backoff = Math.min(maxBackoff, backoff * 2);
    timer = setTimeout(() => {
      timer = undefined;
      restarting = (async () => {
        try {
          const next = await spawnDynalite(dataPath, port, secret);
          if (closing) {
            next.child.kill("SIGTERM");
            await next.exited;
            return;
          }
          current = next;
          restarts++;
          log(`dynalite restarted (pid ${next.child.pid}) on port ${port}`);
          supervise(next);
        } catch (error) {
          if (closing) return;
          log(`restarting dynalite failed: ${(error as Error).message}; trying again in ${backoff} ms`);
          scheduleRestart();
        }
      })();
    }, wait);
  };
  supervise(current);

  return {
    endpoint: `http://127.0.0.1:${port}`,
    secret,
    pid: () => (isRunning(current.child) ? current.child.pid : undefined),
    restarts: () => restarts,
    close: async () => {
      closing = true;
      clearTimeout(timer);
      await restarting;
      if (isRunning(current.child)) current.child.kill("SIGTERM");
      await current.exited;
    },
  };
}

interface Running {
  child: ChildProcess;
  port: number;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

function isRunning(child: ChildProcess): boolean {
  return child.exitCode === null && child.signalCode === null;
}

/**
 * Starts one dynalite process on `port` (0: any free port) and waits until it listens. The
 * secret goes over the IPC channel: arguments and environment can be read in /proc by any
 * process of the same user, the channel cannot.
 */
async function spawnDynalite(dataPath: string | null, port: number, secret: string): Promise<Running> {
  const child = spawn(process.execPath, [path.join(__dirname, "dynaliteChild.cjs"), String(port), ...(dataPath ? [dataPath] : [])], {
    stdio: ["ignore", "ignore", "inherit", "ipc"],
    env: { PATH: process.env.PATH ?? "" },
  });
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once("exit", (code, signal) => resolve({ code, signal })),
  );
  // A child that died before reading it fails the start below (its exit), not here.
  child.send({ type: "secret", secret }, () => undefined);
  const listening = await new Promise<number>((resolve, reject) => {
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
  return { child, port: listening, exited };
}
