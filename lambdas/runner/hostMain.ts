/**
 * Entry of a worker's sandbox host (bundled into host.cjs by buildWorkerBundle): the one
 * process of a sandbox that runs no user code. It starts the worker (user code, under Node's
 * permission model: no child processes, no files but its bundle) and, when the worker asks,
 * the worker's one browser, whose CDP pipe ends it hands to the worker: no DevTools endpoint
 * listens on any socket. It talks to the service over fd 3 in length-prefixed frames.
 *
 * The service treats everything this process says as untrusted (it shares a sandbox and a
 * user with user code); what this process guarantees is for the sandbox's own sake: one
 * browser at a time, launched only here, and nothing left when the worker or the service goes.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { mkdirSync, readdirSync, rmSync } from "node:fs";
import { Socket } from "node:net";
import path from "node:path";
import { FrameReader, encodeFrame } from "./frames";
import type { HostInit, HostMessage, SupervisorMessage, WorkerMessage } from "./protocol";
import { MAX_FRAME_BYTES } from "./protocol";

const channel = new Socket({ fd: 3, readable: true, writable: true });
let worker: ChildProcess | undefined;
let spec: HostInit | undefined;
let browser: ChildProcess | undefined;
let launching = false;

function tell(message: HostMessage | WorkerMessage): void {
  const frame = encodeFrame(message);
  // The worker's messages are user code's to forge: one too big to pass is named, not sent.
  channel.write(frame.length - 4 > MAX_FRAME_BYTES ? encodeFrame({ type: "oversize", bytes: frame.length - 4 }) : frame);
}

function stopAll(code: number): never {
  if (browser?.pid) killQuietly(browser.pid);
  if (worker?.pid) killQuietly(worker.pid);
  process.exit(code);
}

function killQuietly(pid: number): void {
  try {
    process.kill(pid, "SIGKILL");
  } catch {
    // gone already
  }
}

function startWorker(init: HostInit): void {
  const { bundle } = init.worker;
  worker = spawn(
    process.execPath,
    ["--experimental-permission", `--allow-fs-read=${bundle}`, "--disable-warning=ExperimentalWarning", bundle],
    { env: {}, stdio: ["ignore", "ignore", "ignore", "ipc"] },
  );
  worker.on("message", (message: WorkerMessage & { type: string }) => {
    if (message?.type === "browser_request") return void launchBrowser();
    tell(message);
  });
  worker.once("exit", (code, signal) => {
    tell({ type: "worker_exit", code, signal });
    stopAll(1);
  });
}

/** Empties the browser profile (a killed browser leaves its lock and state behind). */
function freshProfile(dir: string): void {
  mkdirSync(dir, { recursive: true });
  for (const entry of readdirSync(dir)) rmSync(path.join(dir, entry), { recursive: true, force: true });
}

/**
 * Starts the worker's browser and sends it the two pipe ends. One at a time: a request while
 * one starts is answered by that start; a request while one runs means the worker lost its
 * connection, so that browser is killed first. No second browser can be alive or starting.
 */
function launchBrowser(): void {
  if (launching || !spec || !worker?.connected) return;
  launching = true;
  const previous = browser;
  browser = undefined;
  const start = () => {
    const current = spec as HostInit;
    try {
      freshProfile(current.browser.profileDir);
      const child = spawn(
        current.browser.executable,
        [...current.browser.args, "--remote-debugging-pipe", `--user-data-dir=${current.browser.profileDir}`, "about:blank"],
        { env: current.browser.env, stdio: ["ignore", "ignore", "ignore", "pipe", "pipe"] },
      );
      browser = child;
      child.once("exit", () => {
        if (browser === child) browser = undefined;
      });
      const [, , , toBrowser, fromBrowser] = child.stdio;
      if (!toBrowser || !fromBrowser || !worker?.connected) throw new Error("the browser's pipes are missing");
      worker.send({ type: "browser_pipe", end: "write" }, toBrowser as Socket);
      worker.send({ type: "browser_pipe", end: "read" }, fromBrowser as Socket);
    } catch (error) {
      if (worker?.connected) worker.send({ type: "browser_failed", message: (error as Error).message });
    } finally {
      launching = false;
    }
  };
  if (previous && previous.exitCode === null && previous.signalCode === null) {
    previous.once("exit", start);
    killQuietly(previous.pid as number);
  } else start();
}

const reader = new FrameReader(
  MAX_FRAME_BYTES,
  (message) => {
    const sent = message as SupervisorMessage | HostInit;
    if (sent.type === "host_init") {
      if (spec) return;
      spec = sent;
      startWorker(sent);
      worker?.send({ type: "init", ...sent.init });
      return;
    }
    if (worker?.connected) worker.send(sent);
  },
  () => stopAll(1),
);
channel.on("data", (chunk: Buffer) => reader.push(chunk));
channel.on("close", () => stopAll(0));
channel.on("error", () => stopAll(1));
process.on("SIGTERM", () => stopAll(0));
