/**
 * Profiles, black-box against the local service: a login made by one function's run is
 * recognised by another function's run (httpOnly cookie, localStorage, IndexedDB); writers of
 * one profile never overlap; names outside what a function may open fail naming the setting;
 * profiles are the account's own, listed, shown and deleted; their state is sealed at rest.
 */
import { mkdtemp, readdir, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { cliEnv, runCli } from "../fixtures/cli/runCli";
import { profileDirOf, signIn, watchedPage } from "../helpers/dashboardPage";
import { expectNoProcessesWith } from "../helpers/processes";
import { launchTestBrowser } from "../helpers/testBrowser";
import { type TestService, startTestService } from "../helpers/localService";
import { CHECK_FN, LOGIN_FN, type LoginSite, startLoginSite } from "../helpers/loginSite";

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

const invoke = (name: string, body: unknown, token?: string) => t.call("POST", `/functions/${name}`, { body, token });

it("keeps a login across two functions: the httpOnly cookie, localStorage and IndexedDB come back in another function's run", async () => {
  await t.deploy("login", LOGIN_FN);
  await t.deploy("check", CHECK_FN);

  // Before any login: the profile is empty, the site does not know the browser.
  const before = await invoke("check", { site: site.url });
  expect(before.status).toBe(200);
  expect(before.body).toEqual({ greeting: "who are you?", user: null, token: null, page_cookies: "" });

  const login = await invoke("login", { site: site.url });
  expect(login.status).toBe(200);

  const after = await invoke("check", { site: site.url });
  expect(after.status).toBe(200);
  // The cookie is httpOnly: the page cannot read it, yet the server receives it.
  expect(after.body).toEqual({ greeting: "welcome sid-4f2a9c", user: "alice", token: "token-42", page_cookies: "" });

  const shown = await t.call("GET", "/profiles/shop");
  expect(shown.status).toBe(200);
  expect(shown.body).toMatchObject({ name: "shop", last_function: "login", last_run_id: login.headers.get("x-run-id"), domains: ["127.0.0.1"] });
  expect(shown.body.bytes).toBeGreaterThan(0);
  expect((await t.call("GET", "/profiles")).body.items.map((item: { name: string }) => item.name)).toEqual(["shop"]);

  // Sealed at rest: the data dir holds no cookie value or stored text in the clear.
  const root = path.join(t.dataDir, "profiles");
  const files = (await readdir(root, { recursive: true })).filter((file) => file.endsWith(".sealed"));
  expect(files).toHaveLength(1);
  const sealed = await readFile(path.join(root, files[0] as string), "latin1");
  for (const clear of ["sid-4f2a9c", "alice", "token-42"]) expect(sealed).not.toContain(clear);
});

it("writes nothing for a persist session that changed nothing (either driver), and saves the next one that changes something", async () => {
  const onSteady = (code: string) => code.replace('profile: "shop"', 'profile: "steady"');
  const revisit = (driver: string, change: string) => `import { Session } from "browserfn/runtime";
export default async function run(site: string) {
  await using session = await Session.start({ driver: "${driver}", profile: "steady", persist: true });
  const page = await session.newPage();
  await page.goto(site + "/account");
  await page.evaluate(() => { ${change} });
  return { greeting: await page.evaluate(() => document.querySelector("h1")?.textContent) };
}
`;
  await Promise.all([
    t.deploy("steady-login", onSteady(LOGIN_FN)),
    t.deploy("steady-check", onSteady(CHECK_FN)),
    t.deploy("revisit", revisit("puppeteer", "")),
    t.deploy("revisit-pw", revisit("playwright", "")),
    t.deploy("note-visit", revisit("playwright", 'localStorage.setItem("visits", "1")')),
  ]);
  expect((await invoke("steady-login", { site: site.url })).status).toBe(200);
  const recorded = (await t.call("GET", "/profiles/steady")).body;
  expect(recorded).toMatchObject({ last_function: "steady-login" });
  for (const name of ["revisit", "revisit-pw"]) {
    const unchanged = await invoke(name, { site: site.url });
    expect(unchanged.body).toEqual({ greeting: "welcome sid-4f2a9c" });
    // Neither the record nor the state was written again: the last change is still the login's.
    expect((await t.call("GET", "/profiles/steady")).body).toEqual(recorded);
  }
  const changed = await invoke("note-visit", { site: site.url });
  expect(changed.status).toBe(200);
  const after = (await t.call("GET", "/profiles/steady")).body;
  expect(after).toMatchObject({ last_function: "note-visit", last_run_id: changed.headers.get("x-run-id") });
  expect(after.bytes).toBeGreaterThan(recorded.bytes);
  expect((await invoke("steady-check", { site: site.url })).body).toEqual({ greeting: "welcome sid-4f2a9c", user: "alice", token: "token-42", page_cookies: "" });
  expect((await t.call("DELETE", "/profiles/steady")).status).toBe(204);
});

it("puts back stored text that would end or break the restore document's script (</script>, non-ASCII, U+2028) intact, either driver", async () => {
  const TRICKY = "</script><script>document.title = 'hijacked'</script><!-- é ✓ 😀 \u2028 \\u003c";
  const save = `import { Session } from "browserfn/runtime";
export default async function run(site: string, value: string) {
  await using session = await Session.start({ profile: "tricky", persist: true });
  const page = await session.newPage();
  await page.goto(site + "/account");
  await page.evaluate((text) => localStorage.setItem("tricky", text), value);
  return { saved: true };
}
`;
  const read = (driver: string) => `import { Session } from "browserfn/runtime";
export default async function run(site: string) {
  await using session = await Session.start({ driver: "${driver}", profile: "tricky" });
  const page = await session.newPage();
  await page.goto(site + "/account");
  return { value: await page.evaluate(() => localStorage.getItem("tricky")) };
}
`;
  await Promise.all([t.deploy("tricky-save", save), t.deploy("tricky-read", read("puppeteer")), t.deploy("tricky-read-pw", read("playwright"))]);
  expect((await invoke("tricky-save", { site: site.url, value: TRICKY })).status).toBe(200);
  expect((await invoke("tricky-read", { site: site.url })).body).toEqual({ value: TRICKY });
  expect((await invoke("tricky-read-pw", { site: site.url })).body).toEqual({ value: TRICKY });
  expect((await t.call("DELETE", "/profiles/tricky")).status).toBe(204);
});

const PLAYWRIGHT_LOGIN_FN = `import { Session } from "browserfn/runtime";
export default async function run(site: string) {
  await using session = await Session.start({ driver: "playwright", profile: "mixed", persist: true });
  const page = await session.context.newPage();
  await page.goto(site + "/login");
  await page.waitForFunction(() => document.title === "logged-in");
  // Closed before the session: its origin's storage is read back in a page of the runtime's own.
  await page.close();
  return { logged_in: true };
}
`;

const PLAYWRIGHT_CHECK_FN = CHECK_FN.replace('Session.start({ profile: "shop" })', 'Session.start({ driver: "playwright", profile: "shop" })');

it("keeps a login across a Playwright function and a puppeteer function: one profile format, either way", async () => {
  await t.deploy("pw-login", PLAYWRIGHT_LOGIN_FN);
  await t.deploy("pptr-check", CHECK_FN.replace('profile: "shop"', 'profile: "mixed"'));
  await t.deploy("pw-check", PLAYWRIGHT_CHECK_FN);
  // Playwright logs in (a page opened on the context itself is set up too); puppeteer is recognised.
  const login = await invoke("pw-login", { site: site.url });
  expect(login.status).toBe(200);
  expect((await invoke("pptr-check", { site: site.url })).body).toEqual({ greeting: "welcome sid-4f2a9c", user: "alice", token: "token-42", page_cookies: "" });
  expect((await t.call("GET", "/profiles/mixed")).body).toMatchObject({ last_function: "pw-login", last_run_id: login.headers.get("x-run-id"), domains: ["127.0.0.1"] });
  // puppeteer logged in to "shop" (the test above); Playwright is recognised.
  expect((await invoke("pw-check", { site: site.url })).body).toEqual({ greeting: "welcome sid-4f2a9c", user: "alice", token: "token-42", page_cookies: "" });
});

it("fails a name the function may not open with an error naming the `profiles` setting, and opens it once the setting lists it", async () => {
  const code = `import { Session } from "browserfn/runtime";
export default async function run(name: string) {
  await using session = await Session.start({ profile: name });
  return { opened: name };
}
`;
  await t.deploy("computed", code);
  const refused = await invoke("computed", { name: "shop" });
  expect(refused.status).toBe(500);
  expect(refused.body.error.code).toBe("function_error");
  expect(refused.body.error.message).toMatch(/may not open the profile 'shop'.*`profiles` setting/);
  // The refusal comes back from the service, yet names the code's own line.
  expect(refused.body.error.details.stack).toMatch(/^ProfileError: .*\n\s+at .*\n?[\s\S]*automation\.ts:3:/);
  const patched = await t.call("PATCH", "/functions/computed", { body: { profiles: ["shop"] } });
  expect(patched.status).toBe(200);
  expect(patched.body.profiles).toEqual(["shop"]);
  expect((await invoke("computed", { name: "shop" })).body).toEqual({ opened: "shop" });
});

it("never lets two writers of one profile overlap: the second waits for the first run's end", async () => {
  const code = `import { Session } from "browserfn/runtime";
export default async function run(hold_ms: number) {
  const session = await Session.start({ profile: "busy", persist: true });
  const opened = Date.now();
  await new Promise((resolve) => setTimeout(resolve, hold_ms));
  await session.close();
  return { opened, closed: Date.now() };
}
`;
  await t.deploy("writer", code);
  const [a, b] = await Promise.all([invoke("writer", { hold_ms: 1500 }), invoke("writer", { hold_ms: 1500 })]);
  expect([a.status, b.status]).toEqual([200, 200]);
  const [first, second] = [a.body, b.body].sort((x, y) => x.opened - y.opened);
  // The lease is the run's until its end: the second writer's session opens after the first closed.
  expect(second.opened).toBeGreaterThanOrEqual(first.closed);
});

it("lists, shows and deletes profiles from the CLI (browserfn profiles list|show|delete)", async () => {
  const configHome = await mkdtemp(path.join(tmpdir(), "browserfn-cli-config-"));
  try {
    const env = cliEnv(configHome, { BROWSERFN_URL: t.url, BROWSERFN_API_KEY: t.adminKey });
    const listed = await runCli(["profiles", "list", "--json"], env);
    expect(listed.code).toBe(0);
    expect(JSON.parse(listed.stdout).items.map((item: { name: string }) => item.name)).toEqual(["busy", "mixed", "shop"]);
    const shown = await runCli(["profiles", "show", "shop"], env);
    expect(shown.code).toBe(0);
    expect(shown.stdout).toMatch(/last_function\s+login/);
    const deleted = await runCli(["profiles", "delete", "busy"], env);
    expect(deleted.code).toBe(0);
    expect((await t.call("GET", "/profiles/busy")).status).toBe(404);
    const bad = await runCli(["profiles", "show", "Not_A_Name"], env);
    expect(bad.code).not.toBe(0);
  } finally {
    await rm(configHome, { recursive: true, force: true });
  }
});

it("keeps profiles per account and deletes them", async () => {
  const other = await t.newAccount("profiles-other");
  expect((await t.call("GET", "/profiles", { token: other })).body).toEqual({ items: [] });
  expect((await t.call("GET", "/profiles/shop", { token: other })).status).toBe(404);
  expect((await t.call("GET", "/profiles/Not_A_Name")).body.error.code).toBe("invalid_name");
  expect((await t.call("DELETE", "/profiles/shop")).status).toBe(204);
  expect((await t.call("GET", "/profiles/shop")).body.error.code).toBe("profile_not_found");
  // Deleted: the next run finds the site does not know it.
  expect((await invoke("check", { site: site.url })).body.greeting).toBe("who are you?");
});

it("shows the account's profiles on the dashboard's Profiles page, and deletes one from there", async () => {
  expect((await invoke("login", { site: site.url })).status).toBe(200);
  const browser = await launchTestBrowser();
  const profileDir = profileDirOf(browser);
  try {
    const problems: string[] = [];
    const page = await watchedPage(browser, problems);
    await signIn(page, t.url, t.adminKey);
    await page.goto(`${t.url}/#/profiles`);
    await page.waitForSelector('#profiles-table button[data-profile="shop"]');
    const row = await page.$eval("#profiles-table", (table) => table.textContent ?? "");
    expect(row).toContain("shop");
    expect(row).toContain("127.0.0.1");
    expect(row).toContain("login");
    page.once("dialog", (dialog) => void dialog.accept());
    await page.click('#profiles-table button[data-profile="shop"]');
    await page.waitForSelector("#profile-status p");
    expect(await page.$eval("#profile-status", (status) => status.textContent)).toBe("Deleted shop.");
    expect((await t.call("GET", "/profiles/shop")).status).toBe(404);
    expect(problems).toEqual([]);
  } finally {
    await browser.close();
    if (profileDir) await expectNoProcessesWith(profileDir);
  }
});

it("fails a run that saves more than 50 MB into a profile with profile_too_large, and keeps the previous state", async () => {
  const code = `import { Session } from "browserfn/runtime";
export default async function run(site: string, size: number) {
  await using session = await Session.start({ profile: "big", persist: true });
  const page = await session.newPage();
  await page.goto(site + "/account");
  await page.evaluate(async (size) => {
    localStorage.setItem("saved", "v" + size);
    await new Promise((resolve) => {
      const open = indexedDB.open("blob", 1);
      open.onupgradeneeded = () => open.result.createObjectStore("kv");
      open.onsuccess = () => {
        const tx = open.result.transaction("kv", "readwrite");
        tx.objectStore("kv").put("x".repeat(size), "payload");
        tx.oncomplete = () => { open.result.close(); resolve(null); };
      };
    });
  }, size);
  return { size };
}
`;
  const read = `import { Session } from "browserfn/runtime";
export default async function run(site: string) {
  await using session = await Session.start({ profile: "big" });
  const page = await session.newPage();
  await page.goto(site + "/account");
  return { saved: await page.evaluate(() => localStorage.getItem("saved")) };
}
`;
  await t.deploy("big-writer", code, { memory_mb: 2048 });
  await t.deploy("big-reader", read);
  expect((await invoke("big-writer", { site: site.url, size: 1000 })).status).toBe(200);
  const before = (await t.call("GET", "/profiles/big")).body;
  const over = await invoke("big-writer", { site: site.url, size: 51 * 1024 * 1024 });
  // A 500 in time, or a 202 when 51 MB outlasts the sync window on a busy machine.
  expect([500, 202]).toContain(over.status);
  const outcome = await t.outcome(over);
  expect(outcome.error?.code).toBe("profile_too_large");
  expect(outcome.error?.message).toContain("'big'");
  const run = await t.call("GET", `/runs/${outcome.runId}`);
  expect(run.body).toMatchObject({ status: "failed", error: { code: "profile_too_large" } });
  expect((await t.call("GET", "/profiles/big")).body).toEqual(before);
  expect((await invoke("big-reader", { site: site.url })).body).toEqual({ saved: "v1000" });
});

it("saves the storage of origins whose pages were closed before the session (read back in a page of its own)", async () => {
  const write = `import { Session } from "browserfn/runtime";
export default async function run(site: string) {
  await using session = await Session.start({ profile: "closed-pages", persist: true });
  const page = await session.newPage();
  await page.goto(site + "/login");
  await page.waitForFunction(() => document.title === "logged-in");
  await page.close();
  return { ok: true };
}
`;
  const read = `import { Session } from "browserfn/runtime";
export default async function run(site: string) {
  await using session = await Session.start({ profile: "closed-pages" });
  const page = await session.newPage();
  await page.goto(site + "/account");
  return { greeting: await page.$eval("h1", (h1) => h1.textContent), user: await page.evaluate(() => localStorage.getItem("user")) };
}
`;
  await t.deploy("closed-writer", write);
  await t.deploy("closed-reader", read);
  expect((await invoke("closed-writer", { site: site.url })).status).toBe(200);
  expect((await invoke("closed-reader", { site: site.url })).body).toEqual({ greeting: "welcome sid-4f2a9c", user: "alice" });
});

it("keeps nothing a failed run saved, and gives its lease back: the next writer opens at once", async () => {
  const code = `import { Session } from "browserfn/runtime";
export default async function run(site: string, fail: boolean) {
  await using session = await Session.start({ profile: "fail-keep", persist: true });
  const page = await session.newPage();
  await page.goto(site + "/login");
  await page.waitForFunction(() => document.title === "logged-in");
  if (fail) throw new Error("failed after logging in");
  return { ok: true };
}
`;
  await t.deploy("fail-keep", code, { timeout_seconds: 20 });
  const failed = await invoke("fail-keep", { site: site.url, fail: true });
  expect(failed.body.error.message).toBe("failed after logging in");
  expect((await t.call("GET", "/profiles/fail-keep")).status).toBe(404);
  // What the failed run's save wrote beside the profiles (sealed as it arrived) is gone with it.
  const leftovers = (await readdir(path.join(t.dataDir, "profiles"), { recursive: true })).filter((file) => file.includes("fail-keep"));
  expect(leftovers).toEqual([]);
  // Held past the failed run's end, the lease would make this writer wait 30 s, past its 20 s timeout.
  expect((await invoke("fail-keep", { site: site.url, fail: false })).status).toBe(200);
  expect((await t.call("GET", "/profiles/fail-keep")).body.last_function).toBe("fail-keep");
});
