import { spawn } from "node:child_process";
import { mkdtemp, readFile, readdir, realpath, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { type PageServer, startPageServer } from "../helpers/pageServer";
import { expectNoProcessesWith } from "../helpers/processes";
import { CLI, FIXTURES, cliEnv, runCli } from "../fixtures/cli/runCli";

describe("browserfn dev", () => {
  let pages: PageServer;
  let configHome: string;

  beforeAll(async () => {
    pages = await startPageServer();
    configHome = await mkdtemp(path.join(tmpdir(), "browserfn-cli-dev-"));
  });
  afterAll(async () => {
    await pages?.close();
    if (configHome) await rm(configHome, { recursive: true, force: true });
  });

  it("runs an automation once with real Chromium, without a service, and leaves no process behind", async () => {
    const dev = await runCli(["dev", path.join(FIXTURES, "title.ts"), "-p", `url=${pages.url}/title/Hello%20dev`], cliEnv(configHome));
    expect(dev.stderr).toContain("Bundled");
    expect(dev.code).toBe(0);
    expect(JSON.parse(dev.stdout)).toEqual({ title: "Hello dev", loud: "HELLO DEV" });
    expect(dev.stderr).toContain(`visited ${pages.url}/title/Hello%20dev`); // the automation's console
    expect(dev.stderr).toMatch(/succeeded in \d+/);
    // Worker and browser ran from a browserfn-dev-* temp dir that names them; both are gone.
    await expectNoProcessesWith(path.join(tmpdir(), "browserfn-dev-"));
  });

  it("checks parameters as the service does, and exits 1 when the automation throws", async () => {
    const missing = await runCli(["dev", path.join(FIXTURES, "title.ts")], cliEnv(configHome));
    expect(missing.code).toBe(3);
    expect(missing.stderr).toContain("url is required [invalid_parameters");
    const failed = await runCli(["dev", path.join(FIXTURES, "fails.ts"), "--data", '{"reason": "in dev"}', "--json"], cliEnv(configHome));
    expect(failed.code).toBe(1);
    expect(JSON.parse(failed.stderr.trim().split("\n").pop() ?? "").error).toMatchObject({ code: "function_error", message: "failed in dev" });
    await expectNoProcessesWith(path.join(tmpdir(), "browserfn-dev-"));
  });

  it("exits 1 with result_too_deep for a result nested past the cap, forged onto the worker's channel or returned", async () => {
    // In a directory of its own: the artifacts' default folder, browserfn-artifacts/<run id>/, tells the run its id.
    const cwd = await mkdtemp(path.join(tmpdir(), "browserfn-cli-dev-cwd-"));
    try {
      const deep = await runCli(["dev", path.join(FIXTURES, "deep.ts"), "--json"], cliEnv(configHome), "", cwd);
      expect(deep.code).toBe(1);
      expect(JSON.parse(deep.stderr.trim().split("\n").pop() ?? "").error).toMatchObject({ code: "result_too_deep" });
      // Returned only, 65 levels (JSON.stringify manages it; the runtime's own check refuses it).
      const returned = await runCli(["dev", path.join(FIXTURES, "deep.ts"), "-p", "depth=65", "-p", "forge=false", "--json"], cliEnv(configHome), "", cwd);
      expect(returned.code).toBe(1);
      expect(JSON.parse(returned.stderr.trim().split("\n").pop() ?? "").error).toMatchObject({ code: "result_too_deep" });
    } finally {
      await rm(cwd, { recursive: true, force: true });
    }
    await expectNoProcessesWith(path.join(tmpdir(), "browserfn-dev-"));
  });

  it("writes the run's artifacts and its failure evidence to --artifacts DIR, naming each file", async () => {
    const dir = path.join(configHome, "evidence");
    const url = `${pages.url}/title/Evidence%20page`;
    const failed = await runCli(["dev", path.join(FIXTURES, "failsOnPage.ts"), "-p", `url=${url}`, "--artifacts", dir], cliEnv(configHome));
    expect(failed.code).toBe(1);
    expect(failed.stderr).toContain("failed on Evidence page [function_error");
    expect((await readdir(dir)).sort()).toEqual(["failure-1.html", "failure-1.png", "note.txt"]);
    expect(await readFile(path.join(dir, "note.txt"), "utf8")).toBe(`about ${url}`);
    expect(await readFile(path.join(dir, "failure-1.html"), "utf8")).toContain("<title>Evidence page</title>");
    expect([...(await readFile(path.join(dir, "failure-1.png"))).subarray(0, 8)]).toEqual([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
    // artifacts.save answers where the file is; the log's "kept" names files that are there.
    expect(failed.stderr).toContain(`note at ${pathToFileURL(dir).href}/note.txt`);
    expect(failed.stderr).toContain(`page 1 was at ${url}: kept failure-1.png, failure-1.html`);
    for (const name of ["note.txt", "failure-1.png", "failure-1.html"]) expect(failed.stderr).toMatch(new RegExp(`Saved ${path.join(dir, name).replace(/[.*+?^$()|[\]\\]/g, "\\$&")} \\(\\d+ bytes, `));
    expect(failed.stderr).toContain(`3 artifact(s) in ${dir}`);
    await expectNoProcessesWith(path.join(tmpdir(), "browserfn-dev-"));
  });

  it("without --artifacts, keeps them in ./browserfn-artifacts/<run id>/ and says so", async () => {
    const cwd = await mkdtemp(path.join(tmpdir(), "browserfn-cli-dev-cwd-"));
    try {
      const child = spawn(process.execPath, [CLI, "dev", path.join(FIXTURES, "saves.ts"), "-p", "text=kept", "--json"], { cwd, env: cliEnv(configHome), stdio: ["ignore", "pipe", "pipe"] });
      let stdout = "";
      let stderr = "";
      child.stdout.on("data", (chunk) => (stdout += chunk));
      child.stderr.on("data", (chunk) => (stderr += chunk));
      expect(await new Promise((resolve) => child.once("close", resolve))).toBe(0);
      expect(JSON.parse(stdout)).toEqual({ saved: 3 });
      const runId = /\(run (run_\w+)\)/.exec(stderr)?.[1] ?? "";
      expect(runId).toMatch(/^run_\w{26}$/);
      const dir = path.join(await realpath(cwd), "browserfn-artifacts", runId);
      expect(await readdir(path.join(cwd, "browserfn-artifacts"))).toEqual([runId]);
      expect((await readdir(dir)).sort()).toEqual(["bytes.bin", "data.json", "note.txt"]);
      expect(await readFile(path.join(dir, "note.txt"), "utf8")).toBe("kept");
      expect([...(await readFile(path.join(dir, "bytes.bin")))]).toEqual([0, 1, 2, 255]);
      expect(stderr).toContain(`Saved ${path.join(dir, "data.json")} (15 bytes, application/json`);
      expect(stderr).toContain(`3 artifact(s) in ${dir}`);
    } finally {
      await rm(cwd, { recursive: true, force: true });
    }
  });

  it("prints the run's console output as it is written, not when the run ends", async () => {
    const child = spawn(process.execPath, [CLI, "dev", path.join(FIXTURES, "slowLog.ts"), "-p", "waitMs=3000"], { env: cliEnv(configHome), stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    let firstLineAt = 0;
    child.stdout.on("data", (chunk) => (stdout += chunk));
    child.stderr.on("data", (chunk) => {
      stderr += chunk;
      if (!firstLineAt && stderr.includes("before the wait")) firstLineAt = Date.now();
    });
    const code = await new Promise<number | null>((resolve) => child.once("close", resolve));
    const endedAt = Date.now();
    expect(code).toBe(0);
    expect(JSON.parse(stdout)).toEqual({ waited: 3000 });
    // Each line once, in order, the first one well before the run ended.
    expect(stderr.split("before the wait")).toHaveLength(2);
    expect(stderr.split("after the wait")).toHaveLength(2);
    expect(stderr.indexOf("before the wait")).toBeLessThan(stderr.indexOf("after the wait"));
    expect(stderr.indexOf("after the wait")).toBeLessThan(stderr.indexOf("succeeded in"));
    expect(endedAt - firstLineAt).toBeGreaterThan(2000);
    await expectNoProcessesWith(path.join(tmpdir(), "browserfn-dev-"));
  });
});
