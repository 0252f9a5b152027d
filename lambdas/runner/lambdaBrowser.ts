import type { Browser } from "puppeteer-core";
// `import = require`: puppeteer-core's CommonJS build, the one automations get (see workerMain).
// eslint-disable-next-line @typescript-eslint/no-require-imports
import puppeteer = require("puppeteer-core");
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import type { Socket } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { browserDrivers, type BrowserDrivers } from "./drivers/browserDrivers";
import { connectPlaywright } from "./drivers/connectPlaywright";
import { PipeTransport } from "./pipeTransport";

/**
 * Launches @sparticuz/chromium inside a function's Lambda: headless shell, its default flags
 * without `--single-process` (that flag breaks a second browser context, and every session is
 * one) and without `--disable-web-security` (a page could then read any origin, the Lambda
 * runtime API on 127.0.0.1 included), speaking CDP over a pipe (no DevTools port). The package comes from the chromium layer (`/opt/nodejs/node_modules`) and is an ES
 * module, so it is loaded with `import()`, which works from CommonJS on every Node version.
 * `executablePath()` decompresses Chromium into /tmp once per container.
 */
export async function launchLambdaChromium(): Promise<Browser> {
  const { default: chromium } = await import("@sparticuz/chromium");
  return launchPipeChromium(
    await chromium.executablePath(),
    [
      ...chromium.args.filter((arg) => arg !== "--single-process" && arg !== "--disable-web-security"),
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
      "--no-first-run",
    ],
    path.join(tmpdir(), "browserfn-downloads"),
  );
}

/** The pipe, both drivers and the process of each browser launchPipeChromium started. */
const launched = new WeakMap<Browser, { drivers: BrowserDrivers; child: ChildProcess; profile: string }>();

/**
 * Starts Chromium (`executable` with `args`, on a fresh profile under /tmp) speaking CDP over
 * its one pipe, shared by both drivers (see CdpMux), and answers puppeteer's Browser on it;
 * `driversOf(browser)` gives the Playwright side. `downloadsDir` is where Playwright's pages
 * download to (the runtime's downloads folder).
 */
export async function launchPipeChromium(executable: string, args: string[], downloadsDir: string): Promise<Browser> {
  const profile = mkdtempSync(path.join(tmpdir(), "browserfn-chromium-"));
  const child = spawn(executable, [...args, "--remote-debugging-pipe", `--user-data-dir=${profile}`, "about:blank"], {
    stdio: ["ignore", "ignore", "ignore", "pipe", "pipe"],
  });
  child.once("exit", () => rmSync(profile, { recursive: true, force: true }));
  const [, , , toBrowser, fromBrowser] = child.stdio as unknown as [unknown, unknown, unknown, Socket, Socket];
  let opened = false;
  const drivers = browserDrivers({
    async openPipe() {
      // One pipe per process: once it closed, the browser is relaunched (warmBrowser).
      if (opened) throw new Error("The browser's pipe closed");
      opened = true;
      return new PipeTransport(toBrowser, fromBrowser);
    },
    connectPuppeteer: (transport) => puppeteer.connect({ transport, defaultViewport: null }),
    connectPlaywright: (mux) => connectPlaywright(mux, downloadsDir),
  });
  try {
    const browser = await drivers.getBrowser();
    launched.set(browser, { drivers, child, profile });
    return browser;
  } catch (error) {
    child.kill("SIGKILL");
    throw error;
  }
}

/** Both drivers of a browser launchPipeChromium started (undefined for one launched otherwise). */
export function driversOf(browser: Browser): BrowserDrivers | undefined {
  return launched.get(browser)?.drivers;
}

/** Kills a browser, whichever way it was launched. */
function killBrowser(browser: Browser): void {
  const own = launched.get(browser)?.child;
  if (!own) return void browser.process()?.kill("SIGKILL");
  if (own.exitCode === null && own.signalCode === null) own.kill("SIGKILL");
}

/**
 * The container's browser: launched on first use, kept warm across invocations, and launched
 * again when it died (a crash, or a container thawed with a dead Chromium). Calls are chained,
 * so two runs never launch two browsers.
 */
export function warmBrowser(launch: () => Promise<Browser>): { get(): Promise<Browser>; close(): Promise<void> } {
  let latest: Promise<Browser | undefined> = Promise.resolve(undefined);
  return {
    get() {
      const next = latest.then(async (existing) => {
        if (existing?.connected) return existing;
        if (existing) killBrowser(existing); // disconnected but maybe still running
        return launch();
      });
      latest = next.catch(() => undefined); // a failed launch is tried again by the next call
      return next;
    },
    async close() {
      const existing = await latest;
      latest = Promise.resolve(undefined);
      await existing?.close().catch(() => undefined);
      if (existing) killBrowser(existing);
    },
  };
}
