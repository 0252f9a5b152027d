/**
 * A profile's storage is put back lazily (layers/runtime/browserState/lazyRestore.ts), black-box
 * against the local service, either driver: in the first document of the saved origin a session
 * page shows, before that document's own scripts (also when it arrives through a redirect), and
 * never again in the run: a logout (storage cleared, the page reloaded) stays a logout, in later
 * documents, in another page of the session, and in the profile saved for the next run, also
 * while the restore's script is still in the pages (another saved origin not shown yet).
 */
import { type TestService, startTestService } from "../helpers/localService";
import { type LoginSite, loginFn, startLoginSite } from "../helpers/loginSite";

jest.setTimeout(180_000);

let t: TestService;
let site: LoginSite;
beforeAll(async () => {
  [t, site] = await Promise.all([startTestService(), startLoginSite()]);
});
afterAll(async () => {
  await site?.close();
  await t?.destroy();
});

const invoke = (name: string, body: unknown) => t.call("POST", `/functions/${name}`, { body });

/** Reads what a document of the site holds now: `user` in localStorage and the IndexedDB token. */
const READ_STATE = `async () => {
  const token = await new Promise((resolve) => {
    const open = indexedDB.open("app");
    open.onsuccess = () => {
      const db = open.result;
      if (!db.objectStoreNames.contains("kv")) { db.close(); return resolve(null); }
      const read = db.transaction("kv").objectStore("kv").get("token");
      read.onsuccess = () => { db.close(); resolve(read.result ?? null); };
    };
  });
  return { user: localStorage.getItem("user"), token };
}`;

/** Logs out as a site does: its storage cleared (the IndexedDB database deleted), then the page reloaded. */
const logoutFn = (driver: string, profile: string) => `import { Session } from "browserfn/runtime";
export default async function run(site: string) {
  await using session = await Session.start({ driver: "${driver}", profile: "${profile}", persist: true });
  const page = await session.newPage();
  // Through a redirect: the saved origin's first document is the redirect's target.
  await page.goto(site + "/to-whoami");
  const first = { title: await page.title(), ...(await page.evaluate(${READ_STATE})) };
  await page.evaluate(async () => {
    localStorage.clear();
    await new Promise((resolve) => { const gone = indexedDB.deleteDatabase("app"); gone.onsuccess = gone.onerror = gone.onblocked = resolve; });
  });
  await page.reload();
  const reloaded = { title: await page.title(), ...(await page.evaluate(${READ_STATE})) };
  await page.goto(site + "/whoami?again");
  const again = { title: await page.title(), ...(await page.evaluate(${READ_STATE})) };
  const other = await session.newPage();
  await other.goto(site + "/whoami");
  const otherPage = { title: await other.title(), ...(await other.evaluate(${READ_STATE})) };
  return { first, reloaded, again, otherPage };
}
`;

/**
 * Logs in on the site and on its other name (`localhost`, another origin): the profile then holds
 * two origins, and a run that shows only the first keeps waiting for the second, so its pages
 * keep the restore's script for every later document (a reload after a logout included).
 */
const loginTwiceFn = (profile: string) => `import { Session } from "browserfn/runtime";
export default async function run(site: string) {
  await using session = await Session.start({ profile: "${profile}", persist: true });
  const page = await session.newPage();
  for (const origin of [site, site.replace("127.0.0.1", "localhost")]) {
    await page.goto(origin + "/login");
    await page.waitForFunction(() => document.title === "logged-in");
  }
  return { logged_in: true };
}
`;

const readFn = (driver: string, profile: string) => `import { Session } from "browserfn/runtime";
export default async function run(site: string) {
  await using session = await Session.start({ driver: "${driver}", profile: "${profile}" });
  const page = await session.newPage();
  await page.goto(site + "/whoami");
  return { title: await page.title(), ...(await page.evaluate(${READ_STATE})) };
}
`;

it.each(["puppeteer", "playwright"])("%s: the saved storage is back before the origin's first document runs its scripts, and a logout in the run stays a logout", async (driver) => {
  const profile = `logout-${driver}`;
  await Promise.all([
    t.deploy(`login-${driver}`, loginTwiceFn(profile)),
    t.deploy(`logout-${driver}`, logoutFn(driver, profile)),
    t.deploy(`read-${driver}`, readFn(driver, profile)),
  ]);
  expect((await invoke(`login-${driver}`, { site: site.url })).status).toBe(200);
  // Before the logout, a reading run finds the login, from the document's first script on.
  expect((await invoke(`read-${driver}`, { site: site.url })).body).toEqual({ title: "user:alice", user: "alice", token: "token-42" });

  const out = await invoke(`logout-${driver}`, { site: site.url });
  expect(out.status).toBe(200);
  expect(out.body).toEqual({
    first: { title: "user:alice", user: "alice", token: "token-42" },
    reloaded: { title: "user:null", user: null, token: null },
    again: { title: "user:null", user: null, token: null },
    otherPage: { title: "user:null", user: null, token: null },
  });
  // The logout is what the profile keeps.
  expect((await invoke(`read-${driver}`, { site: site.url })).body).toEqual({ title: "user:null", user: null, token: null });
});

/** Adds a script of its own for every new document (the driver's call), which notes what localStorage holds as it runs. */
const initScriptFn = (driver: string, profile: string) => `import { Session } from "browserfn/runtime";
export default async function run(site: string) {
  await using session = await Session.start({ driver: "${driver}", profile: "${profile}" });
  const page = await session.newPage();
  const note = () => { (globalThis as any).seenByInitScript = String(localStorage.getItem("user")); };
  ${driver === "playwright" ? "await page.addInitScript(note);" : "await page.evaluateOnNewDocument(note);"}
  await page.goto(site + "/whoami");
  return { title: await page.title(), seen: await page.evaluate(() => (globalThis as any).seenByInitScript) };
}
`;

it.each(["puppeteer", "playwright"])("%s: a new-document script the code adds to the session's first page runs after the restore (it sees the saved storage)", async (driver) => {
  const profile = `init-script-${driver}`;
  await Promise.all([t.deploy(`init-login-${driver}`, loginTwiceFn(profile)), t.deploy(`init-script-${driver}`, initScriptFn(driver, profile))]);
  expect((await invoke(`init-login-${driver}`, { site: site.url })).status).toBe(200);
  const out = await invoke(`init-script-${driver}`, { site: site.url });
  expect([out.status, out.body]).toEqual([200, { title: "user:alice", seen: "alice" }]);
});

/** Names on the document's global object that only browserfn would put there. */
const traceFn = (driver: string, profile: string) => `import { Session } from "browserfn/runtime";
export default async function run(site: string) {
  await using session = await Session.start({ driver: "${driver}", profile: "${profile}" });
  const page = await session.newPage();
  const ours = () => Object.getOwnPropertyNames(globalThis).filter((name) => name.startsWith("__browserfn"));
  await page.goto(site + "/whoami");
  const first = { title: await page.title(), names: await page.evaluate(ours) };
  // The restore has confirmed by now; later documents of the page are the site's alone.
  await new Promise((resolve) => setTimeout(resolve, 500));
  await page.goto(site + "/whoami?later");
  await page.reload();
  return { first, later: { title: await page.title(), names: await page.evaluate(ours) } };
}
`;

it.each(["puppeteer", "playwright"])("%s: once the saved origin is restored, later documents of the page find nothing of the restore (no script, no binding)", async (driver) => {
  const profile = `trace-${driver}`;
  await Promise.all([t.deploy(`trace-login-${driver}`, loginFn(profile)), t.deploy(`trace-${driver}`, traceFn(driver, profile))]);
  expect((await invoke(`trace-login-${driver}`, { site: site.url })).status).toBe(200);
  const out = await invoke(`trace-${driver}`, { site: site.url });
  expect([out.status, out.body]).toEqual([200, { first: { title: "user:alice", names: [] }, later: { title: "user:alice", names: [] } }]);
});

/**
 * A document that finds the restore's binding calls it to confirm another saved origin (one the
 * session never shows), as a hostile site would: were that believed, the save would read that
 * origin's storage in this session, where it was never put back (empty), and wipe it from the
 * profile. The page's first document (its empty `about:blank`, there before the restore's
 * script) still has the binding: the code reaches it there and stands in for the site.
 */
const forgeFn = (driver: string, profile: string) => `import { Session } from "browserfn/runtime";
export default async function run(site: string) {
  await using session = await Session.start({ driver: "${driver}", profile: "${profile}", persist: true });
  const page = await session.newPage();
  const other = site.replace("127.0.0.1", "localhost");
  const forged = await page.evaluate((origin) => {
    const name = Object.getOwnPropertyNames(globalThis).find((key) => key.startsWith("__browserfnRestored_"));
    if (!name) return "no binding";
    (globalThis as any)[name](origin);
    return "called";
  }, new URL(other).origin);
  await page.goto(site + "/whoami");
  return { forged, title: await page.title() };
}
`;

it.each(["puppeteer", "playwright"])("%s: a forged confirmation of another saved origin does not make the save wipe that origin's storage", async (driver) => {
  const profile = `forge-${driver}`;
  await Promise.all([t.deploy(`forge-login-${driver}`, loginTwiceFn(profile)), t.deploy(`forge-${driver}`, forgeFn(driver, profile)), t.deploy(`forge-read-${driver}`, readFn(driver, profile))]);
  expect((await invoke(`forge-login-${driver}`, { site: site.url })).status).toBe(200);
  const out = await invoke(`forge-${driver}`, { site: site.url });
  expect([out.status, out.body]).toEqual([200, { forged: "called", title: "user:alice" }]);
  // The origin the session never showed keeps its saved storage.
  const other = site.url.replace("127.0.0.1", "localhost");
  expect((await invoke(`forge-read-${driver}`, { site: other })).body).toEqual({ title: "user:alice", user: "alice", token: "token-42" });
});
