/**
 * The save's read of a page the restore armed (layers/runtime/browserState/lazyRestore.ts,
 * `finish(readNow)`), in a real browser: the page's storage is read where it is, on the
 * restore's own CDP session, right behind the round trip that brings the restore's
 * confirmations in, and the driver's own evaluation is not used for it. What a page answers is
 * kept only as the storage of the origin its document has: a page that forges its answer, or
 * navigates away while it is read, never changes another origin's saved storage.
 */
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import type { Browser, BrowserContext, Page } from "puppeteer-core";
import { type BrowserState, stateFromBytes } from "../../layers/runtime/browserState/browserState";
import { SETTLE_MS } from "../../layers/runtime/browserState/lazyRestore";
import type { OriginPage } from "../../layers/runtime/browserState/originStorage";
import { puppeteerStateContext } from "../../layers/runtime/browserState/puppeteerOrigins";
import type { StateContext } from "../../layers/runtime/browserState/stateContext";
import { loadProfile } from "../../layers/runtime/sessionProfile";
import { launchTestBrowser } from "../helpers/testBrowser";

jest.setTimeout(60_000);

let browser: Browser;
const servers: Array<ReturnType<typeof createServer>> = [];
let siteA = "";
let siteB = "";

async function site(): Promise<string> {
  const server = createServer((_, response) => response.writeHead(200, { "content-type": "text/html" }).end("<!doctype html><title>site</title>"));
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

beforeAll(async () => {
  [siteA, siteB, browser] = await Promise.all([site(), site(), launchTestBrowser()]);
});

afterAll(async () => {
  await browser?.close();
  for (const server of servers) server.close();
});

/** A profile holding localStorage for both sites, its origins in order, as a save writes them. */
const saved = (): BrowserState => ({
  cookies: [],
  origins: [
    { origin: siteA, localStorage: [["user", "alice"]] as Array<[string, string]>, indexedDB: [] },
    { origin: siteB, localStorage: [["bank", "b-token"]] as Array<[string, string]>, indexedDB: [] },
  ].sort((a, b) => (a.origin < b.origin ? -1 : 1)),
});

/** A session's context with a profile loaded, counting the reads that go through the driver (open pages' evaluations, helper pages). */
async function open(context: BrowserContext, state: BrowserState = saved()) {
  const driver = puppeteerStateContext(browser, context);
  const driverReads = { evaluate: 0, helper: 0 };
  const counted: StateContext<Page, Page> = {
    ...driver,
    async openPages() {
      const pages = await driver.openPages();
      const wrapped = new Map<string, OriginPage>();
      for (const [origin, page] of pages) {
        wrapped.set(origin, {
          ...page,
          evaluate: (fn, arg) => {
            driverReads.evaluate += 1;
            return page.evaluate(fn, arg);
          },
        });
      }
      return wrapped;
    },
    helperPage: () => {
      driverReads.helper += 1;
      return driver.helperPage();
    },
  };
  const sent: Uint8Array[] = [];
  const profile = await loadProfile(counted, { open: async () => new Uint8Array(), save: async (_name, bytes) => void sent.push(bytes) }, "p", state, true);
  return { profile, driverReads, sent };
}

/** Runs `test` on a page of a fresh context with the profile loaded, the page armed for the restore; the context closed after. */
async function withArmedPage(test: (session: { page: Page } & Awaited<ReturnType<typeof open>>) => Promise<void>, state?: BrowserState): Promise<void> {
  const context = await browser.createBrowserContext();
  try {
    const opened = await open(context, state);
    const page = await context.newPage();
    await opened.profile.seed(page);
    await test({ page, ...opened });
  } finally {
    await context.close();
  }
}

/** The localStorage the one save sent holds for `origin`. */
function savedStorage(sent: Uint8Array[], origin: string): Array<[string, string]> | undefined {
  expect(sent).toHaveLength(1);
  return stateFromBytes(sent[0] as Uint8Array).origins.find((state) => state.origin === origin)?.localStorage;
}

it("reads an armed page's changed storage where it is, on the restore's session, without the driver's evaluation", () =>
  withArmedPage(async ({ page, profile, driverReads, sent }) => {
    await page.goto(`${siteA}/`);
    // The restore put the saved state back; the site then changes it.
    expect(await page.evaluate(() => localStorage.getItem("user"))).toBe("alice");
    await page.evaluate(() => localStorage.setItem("user", "alice-2"));
    await profile.save();
    expect(driverReads).toEqual({ evaluate: 0, helper: 0 });
    expect(savedStorage(sent, siteA)).toEqual([["user", "alice-2"]]);
    // The other site, never shown, keeps its saved state.
    expect(savedStorage(sent, siteB)).toEqual([["bank", "b-token"]]);
  }));

it("writes nothing when the armed page's storage is still as opened (its page says so, not the storage again)", () =>
  withArmedPage(async ({ page, profile, driverReads, sent }) => {
    await page.goto(`${siteA}/`);
    expect(await page.evaluate(() => localStorage.getItem("user"))).toBe("alice");
    await profile.save();
    expect(driverReads).toEqual({ evaluate: 0, helper: 0 });
    expect(sent).toHaveLength(0);
  }));

it("drops a forged answer that claims another origin: that site's saved storage is untouched, and the page's own origin is read in a page of the session's own", () =>
  withArmedPage(async ({ page, profile, sent }) => {
    await page.goto(`${siteA}/`);
    await page.evaluate(() => localStorage.setItem("user", "alice-3"));
    // The site answers every JSON.stringify with the other site's origin and storage of its choosing.
    await page.evaluate((other) => {
      const forged = JSON.stringify({ origin: other, localStorage: [["bank", "stolen"]], indexedDB: [] });
      JSON.stringify = () => forged;
    }, siteB);
    await profile.save();
    expect(savedStorage(sent, siteB)).toEqual([["bank", "b-token"]]);
    expect(savedStorage(sent, siteA)).toEqual([["user", "alice-3"]]);
    expect(stateFromBytes(sent[0] as Uint8Array).origins.map((origin) => origin.origin).sort()).toEqual([siteA, siteB].sort());
  }));

it("never keeps what a page shows after it navigated away during the save's read as the storage of the origin it left", () =>
  withArmedPage(async ({ page, profile, sent }) => {
    // The other site first: its storage is restored, then changed, in this context.
    await page.goto(`${siteB}/`);
    await page.evaluate(() => localStorage.setItem("bank", "b-live"));
    await page.goto(`${siteA}/`);
    expect(await page.evaluate(() => localStorage.getItem("user"))).toBe("alice");
    // The hostile site learns that the save reads it (its read lists the databases) and goes to the other site then, never answering.
    await page.evaluate((other) => {
      indexedDB.databases = () => {
        location.href = other;
        return new Promise(() => undefined);
      };
    }, `${siteB}/`);
    await profile.save();
    expect(savedStorage(sent, siteA)).toEqual([["user", "alice"]]);
    expect(savedStorage(sent, siteB)).toEqual([["bank", "b-live"]]);
  }));

/** The saved profile with thousands of IndexedDB records for site A: its restore's write outlasts the goto, a change and the save's first round trip. */
function slowToRestore(): BrowserState {
  const records = Array.from({ length: 4000 }, (_, i) => ({ key: `r${i}`, value: "v".repeat(500) }));
  const state = saved();
  const a = state.origins.find((origin) => origin.origin === siteA);
  if (a) a.indexedDB = [{ name: "big", version: 1, stores: [{ name: "kv", keyPath: null, autoIncrement: false, indexes: [], records }] }];
  return state;
}

it("saves what the session changed in a document whose restore was still writing (its IndexedDB) when the session closed", () =>
  withArmedPage(async ({ page, profile, sent }) => {
    await page.goto(`${siteA}/`);
    await page.evaluate(() => localStorage.setItem("user", "alice-quick"));
    await profile.save();
    expect(savedStorage(sent, siteA)).toEqual([["user", "alice-quick"]]);
    const big = stateFromBytes(sent[0] as Uint8Array).origins.find((origin) => origin.origin === siteA)?.indexedDB[0];
    expect(big?.stores[0]?.records).toHaveLength(4000);
    expect(savedStorage(sent, siteB)).toEqual([["bank", "b-token"]]);
  }, slowToRestore()));

it("does not wait for a restoring document whose page was closed: that origin keeps its saved state", () =>
  withArmedPage(async ({ page, profile, sent }) => {
    await page.goto(`${siteA}/`);
    await page.evaluate(() => localStorage.setItem("user", "alice-gone"));
    await page.close();
    const started = Date.now();
    await profile.save();
    expect(Date.now() - started).toBeLessThan(SETTLE_MS);
    // Nothing the session could read changed: the profile is not written.
    expect(sent).toHaveLength(0);
  }, slowToRestore()));

it("does not wait for a restoring document that gave way to another of its origin: only that document's restore is waited for", () =>
  withArmedPage(async ({ page, profile }) => {
    await page.goto(`${siteA}/`);
    // At once to another document of the same site: the restoring one goes, its writes unfinished or not.
    await page.goto(`${siteA}/next`);
    const started = Date.now();
    await profile.save();
    expect(Date.now() - started).toBeLessThan(SETTLE_MS);
  }, slowToRestore()));
