import type { Browser } from "puppeteer-core";
// `import = require`: puppeteer-core's CommonJS build, the one automations get (see workerMain).
// eslint-disable-next-line @typescript-eslint/no-require-imports
import puppeteer = require("puppeteer-core");

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
  return puppeteer.launch({
    executablePath: await chromium.executablePath(),
    args: [
      ...chromium.args.filter((arg) => arg !== "--single-process" && arg !== "--disable-web-security"),
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
      "--no-first-run",
    ],
    headless: "shell",
    defaultViewport: null,
    pipe: true,
  });
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
        existing?.process()?.kill("SIGKILL"); // disconnected but maybe still running
        return launch();
      });
      latest = next.catch(() => undefined); // a failed launch is tried again by the next call
      return next;
    },
    async close() {
      const existing = await latest;
      latest = Promise.resolve(undefined);
      await existing?.close().catch(() => existing.process()?.kill("SIGKILL"));
    },
  };
}
