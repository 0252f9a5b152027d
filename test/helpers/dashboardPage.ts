import type { Browser, Page } from "puppeteer-core";

/**
 * A new page of `browser` at 1280×900 that notes, in `problems`, every console error or
 * warning, page error and CSP violation, and in `requested` (when given) every URL it asks for.
 */
export async function watchedPage(browser: Browser, problems: string[], requested?: string[]): Promise<Page> {
  const page = await browser.newPage();
  await page.setViewport({ width: 1280, height: 900 });
  page.on("console", (message) => {
    if (message.type() === "error" || message.type() === "warn") problems.push(`console ${message.type()}: ${message.text()}`);
  });
  page.on("pageerror", (error) => problems.push(`page error: ${String(error)}`));
  if (requested) page.on("request", (request) => requested.push(request.url()));
  await page.evaluateOnNewDocument(() => {
    document.addEventListener("securitypolicyviolation", (event) => console.error(`CSP violation: ${event.violatedDirective} ${event.blockedURI}`));
  });
  return page;
}

/** Opens the dashboard at `url` on `page` and signs in with `key`, until the function list shows. */
export async function signIn(page: Page, url: string, key: string): Promise<void> {
  await page.goto(`${url}/`, { waitUntil: "networkidle0" });
  await page.waitForSelector("#sign-in");
  await page.type("#api-key", key);
  await page.click("#sign-in button[type=submit]");
  await page.waitForSelector("#functions a.function-link");
}

/** The profile directory a launched test browser was given ("" when it names none): its processes carry it. */
export function profileDirOf(browser: Browser): string {
  return browser.process()?.spawnargs.find((arg) => arg.startsWith("--user-data-dir="))?.split("=")[1] ?? "";
}

/**
 * What the dashboard's blob: URLs hold (null once revoked): their type and bytes (base64), read
 * from a new page of the same origin (`url`) without the dashboard's Content-Security-Policy,
 * whose connect-src has no blob:.
 */
export async function readBlobs(browser: Browser, url: string, urls: string[]): Promise<({ type: string | null; base64: string } | null)[]> {
  const reader = await browser.newPage();
  try {
    await reader.goto(`${url}/health`);
    return await reader.evaluate(
      (all) =>
        Promise.all(
          all.map((blobUrl) =>
            fetch(blobUrl).then(
              async (response) => {
                const bytes = new Uint8Array(await response.arrayBuffer());
                let binary = "";
                for (const byte of bytes) binary += String.fromCharCode(byte);
                return { type: response.headers.get("content-type"), base64: btoa(binary) };
              },
              () => null,
            ),
          ),
        ),
      urls,
    );
  } finally {
    await reader.close();
  }
}
