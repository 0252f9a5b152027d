/**
 * The save's read of an origin's storage (layers/runtime/browserState/originStorage.ts), in a real
 * page: storage still as the profile opened it is only said to be the same (its SHA-256 compared
 * in the page), not sent back; any change, in localStorage or IndexedDB, is read in full.
 */
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import type { Browser, BrowserContext, Page } from "puppeteer-core";
import type { OriginState } from "../../layers/runtime/browserState/browserState";
import { readOrigins } from "../../layers/runtime/browserState/originStorage";
import { puppeteerStateContext } from "../../layers/runtime/browserState/puppeteerOrigins";
import { launchTestBrowser } from "../helpers/testBrowser";

jest.setTimeout(60_000);

let browser: Browser;
let server: ReturnType<typeof createServer>;
let origin = "";
let context: BrowserContext;
let page: Page;

beforeAll(async () => {
  server = createServer((_, response) => response.writeHead(200, { "content-type": "text/html" }).end("<!doctype html><title>site</title>"));
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  browser = await launchTestBrowser();
  context = await browser.createBrowserContext();
  page = await context.newPage();
  await page.goto(`${origin}/`);
  await page.evaluate(() => {
    for (let i = 0; i < 20; i++) localStorage.setItem(`k${i}`, "x".repeat(500) + i);
  });
  await putSession({ token: "t-1", n: 1 });
});

afterAll(async () => {
  await browser?.close();
  server?.close();
});

/** Puts `value` as the record "session" of the page's IndexedDB database "app" (made, with its store, the first time). */
function putSession(value: { token: string; n: number }): Promise<void> {
  return page.evaluate(
    (record) =>
      new Promise<void>((resolve, reject) => {
        const open = indexedDB.open("app", 1);
        open.onupgradeneeded = () => open.result.createObjectStore("kv");
        open.onsuccess = () => {
          const tx = open.result.transaction("kv", "readwrite");
          tx.objectStore("kv").put(record, "session");
          tx.oncomplete = () => {
            open.result.close();
            resolve();
          };
        };
        open.onerror = () => reject(open.error);
      }),
    value,
  );
}

/** What the save reads of the site's origin, given the state it opened (if any). */
async function read(opened?: OriginState): Promise<OriginState | undefined> {
  const state = puppeteerStateContext(browser, context);
  const open = await state.openPages();
  const known = new Map<string, OriginState>(opened ? [[origin, opened]] : []);
  const [found] = await readOrigins(() => state.helperPage(), [origin], (at) => open.get(at), known);
  return found;
}

it("takes storage still as opened from what was opened, without the page sending it back", async () => {
  const first = await read();
  expect(first?.localStorage).toHaveLength(20);
  expect(first?.indexedDB[0]?.stores[0]?.records).toEqual([{ key: "session", value: { token: "t-1", n: 1 } }]);
  // The very object opened comes back: the page answered "the same", not the storage again.
  const opened = JSON.parse(JSON.stringify(first)) as OriginState;
  expect(await read(opened)).toBe(opened);
});

it("reads in full what changed since the profile opened: a localStorage item, then an IndexedDB record", async () => {
  const opened = (await read()) as OriginState;
  await page.evaluate(() => localStorage.setItem("k3", "changed"));
  const afterStorage = await read(opened);
  expect(afterStorage).not.toBe(opened);
  expect(afterStorage?.localStorage).toContainEqual(["k3", "changed"]);

  const again = (await read()) as OriginState;
  await putSession({ token: "t-2", n: 2 });
  const afterRecord = await read(again);
  expect(afterRecord).not.toBe(again);
  expect(afterRecord?.indexedDB[0]?.stores[0]?.records).toEqual([{ key: "session", value: { token: "t-2", n: 2 } }]);
});
