import { execFile } from "node:child_process";
import { once } from "node:events";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { promisify } from "node:util";
import { tmpdir } from "node:os";
import puppeteer, { type Browser } from "puppeteer-core";
import { launchPipeChromium } from "../../lambdas/runner/lambdaBrowser";

/**
 * @sparticuz/chromium's binary and flags. It is an ES module only, which jest's CommonJS
 * sandbox cannot load, so a short Node process asks it.
 */
export async function sparticuzChromium(): Promise<{ executablePath: string; args: string[] }> {
  const script = `import c from "@sparticuz/chromium";
    console.log(JSON.stringify({ executablePath: await c.executablePath(), args: c.args }));`;
  const { stdout } = await promisify(execFile)(process.execPath, ["--input-type=module", "-e", script], {
    cwd: join(__dirname, "../.."),
  });
  return JSON.parse(stdout) as { executablePath: string; args: string[] };
}

/** Launches @sparticuz/chromium as the service does: headless, without `--single-process`. */
export async function launchTestBrowser(): Promise<Browser> {
  const chromium = await sparticuzChromium();
  return puppeteer.launch({
    executablePath: chromium.executablePath,
    args: chromium.args.filter((arg) => arg !== "--single-process"),
    headless: "shell",
    defaultViewport: null,
  });
}

export interface PageServer {
  /** `http://127.0.0.1:<port>` */
  base: string;
  close(): Promise<void>;
}

/**
 * Serves test pages on 127.0.0.1 (ephemeral port): every path answers
 * `<title>Hello <path></title><p><the request's Cookie header, or "no cookie"></p>`,
 * and `/set-cookie` also sets `token=secret`.
 */
export async function startPageServer(): Promise<PageServer> {
  const server = createServer((req, res) => {
    const headers: Record<string, string> = { "content-type": "text/html" };
    if (req.url === "/set-cookie") headers["set-cookie"] = "token=secret; Path=/";
    res.writeHead(200, headers).end(`<title>Hello ${req.url}</title><p>${req.headers.cookie ?? "no cookie"}</p>`);
  });
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    base,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

/**
 * Launches @sparticuz/chromium as the Lambda runner does (launchLambdaChromium): over its one
 * CDP pipe, shared by puppeteer and Playwright, so that Playwright code runs too.
 */
export async function launchTestPipeBrowser(): Promise<Browser> {
  const chromium = await sparticuzChromium();
  const args = chromium.args.filter((arg) => arg !== "--single-process" && arg !== "--disable-web-security");
  return launchPipeChromium(chromium.executablePath, args, join(tmpdir(), "browserfn-test-downloads"));
}
