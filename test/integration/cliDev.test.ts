import { spawn } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
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
