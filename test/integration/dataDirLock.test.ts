import { spawn } from "node:child_process";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { generateApiKey } from "../../lambdas/identity/apiKeys";
import { type ChildService, startChildService } from "../helpers/childService";
import { requestJson } from "../helpers/http";
import { type TestService, startTestService } from "../helpers/localService";
import { expectNoProcessesWith, isAlive, settledProcessesWith } from "../helpers/processes";
import { type PageServer, startPageServer } from "../helpers/testBrowser";

// One service per data dir: `npm start` twice on one data dir. Before the lock, the second start
// took the first one's workers and browsers for a crash's leftovers, SIGKILLed them, deleted its
// runtime folder and died with a dynalite stack trace, and the first then failed every browser
// run with 500 function_crashed naming a host path.

const ROOT = path.resolve(__dirname, "../..");
/** The test's pages are on 127.0.0.1. */
const LOCAL_NETWORK = { BROWSERFN_ALLOW_LOCAL_NETWORK: "true" };
const BROWSER_FN = `import { Session } from "browserfn/runtime";
export default async function run(url: string) {
  await using session = await Session.start();
  const page = await session.newPage();
  await page.goto(url);
  return await page.title();
}
`;

/** Runs `npm start`'s entry on `dataDir` until it exits by itself: its exit code and output. */
function startAgain(dataDir: string, key: string): Promise<{ code: number | null; output: string; ms: number }> {
  const started = Date.now();
  const child = spawn(process.execPath, ["bin/start.cjs"], {
    cwd: ROOT,
    env: { ...process.env, PORT: "0", BROWSERFN_DATA_DIR: dataDir, BROWSERFN_BOOTSTRAP_KEY: key, BROWSERFN_REQUEST_LOG: "0", ...LOCAL_NETWORK },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  child.stdout.on("data", (chunk) => (output += chunk));
  child.stderr.on("data", (chunk) => (output += chunk));
  const timer = setTimeout(() => child.kill("SIGKILL"), 60_000);
  return new Promise((resolve) =>
    child.once("exit", (code) => {
      clearTimeout(timer);
      resolve({ code, output, ms: Date.now() - started });
    }),
  );
}

describe("a data dir", () => {
  let dataDir: string;
  let pages: PageServer;
  let first: ChildService | undefined;
  const key = generateApiKey();

  beforeAll(async () => {
    dataDir = await mkdtemp(path.join(tmpdir(), "browserfn-lock-"));
    pages = await startPageServer();
  });
  afterAll(async () => {
    await first?.kill();
    await pages.close();
    await rm(dataDir, { recursive: true, force: true });
  });

  const call = (url: string, method: string, urlPath: string, body?: unknown) => requestJson(url, method, urlPath, { body, token: key });

  it("is served by one service: a second start exits 1 at once naming the first, which keeps working; after a crash the next start cleans its leftovers", async () => {
    first = await startChildService(dataDir, key, LOCAL_NETWORK);
    expect((await call(first.url, "POST", "/functions", { name: "titled", code: BROWSER_FN })).status).toBe(201);
    expect((await call(first.url, "POST", "/functions/titled", { url: `${pages.base}/one` })).body).toBe("Hello /one");
    const runtimeDir = (await readFile(path.join(dataDir, "runtime-dir"), "utf8")).trim();
    // As they are once the run's sandbox is idle again (its worker replaced, its kept browser reset: the run's renderers gone).
    const workers = await settledProcessesWith(runtimeDir);
    expect(workers.length).toBeGreaterThan(0);

    const second = await startAgain(dataDir, key);
    expect(second.code).toBe(1);
    expect(second.output.trim()).toBe(`browserfn is already running on this data dir (pid ${first.child.pid}, ${first.url})`);
    expect(second.ms).toBeLessThan(15_000);

    // The first service's workers, browsers and runtime folder are as they were; it serves browser runs.
    expect(workers.filter(isAlive)).toEqual(workers);
    expect((await call(first.url, "POST", "/functions/titled", { url: `${pages.base}/two` })).body).toBe("Hello /two");

    // A real crash: the lock goes with the process, and the next start takes the data dir and cleans up.
    await first.kill();
    first = await startChildService(dataDir, key, LOCAL_NETWORK);
    await expectNoProcessesWith(runtimeDir);
    expect((await call(first.url, "POST", "/functions/titled", { url: `${pages.base}/three` })).body).toBe("Hello /three");
    expect(await first.stop()).toBe(0);
    first = undefined;
  }, 180_000);
});

describe("a worker that cannot start", () => {
  let t: TestService;
  let pages: PageServer;
  beforeAll(async () => {
    // The process sandbox makes the browser's profile folder in the runtime folder, as the report had it.
    [t, pages] = await Promise.all([startTestService({ config: { sandbox: "process" } }), startPageServer()]);
  });
  afterAll(async () => {
    await pages.close();
    await t.service.close();
    await rm(t.dataDir, { recursive: true, force: true });
  });

  it("fails the run without naming a host path", async () => {
    await t.deploy("titled", BROWSER_FN);
    // What the second start used to do to the first: its runtime folder is gone.
    await rm(t.service.runtimeDir, { recursive: true, force: true });
    const answer = await t.call("POST", "/functions/titled", { body: { url: `${pages.base}/gone` } });
    expect(answer.status).toBe(500);
    expect(answer.body.error.code).toBe("function_crashed");
    expect(answer.text).not.toContain(t.service.runtimeDir);
    expect(answer.text).not.toMatch(/\/tmp\//);
  }, 60_000);
});
