import { spawn, spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";

const CLI = path.resolve(__dirname, "../../bin/cli.js");

describe("the browserfn command", () => {
  it("prints its version and help, and exits 2 on an unknown command", () => {
    const version = spawnSync(process.execPath, [CLI, "version"], { encoding: "utf8" });
    expect(version.status).toBe(0);
    expect(version.stdout.trim()).toBe(JSON.parse(readFileSync(path.resolve(__dirname, "../../package.json"), "utf8")).version);
    const help = spawnSync(process.execPath, [CLI, "help"], { encoding: "utf8" });
    expect(help.stdout).toContain("start");
    const unknown = spawnSync(process.execPath, [CLI, "frobnicate"], { encoding: "utf8" });
    expect(unknown.status).toBe(2);
    expect(unknown.stderr).toContain("unknown command 'frobnicate'");
  });

  it("starts the local service with `browserfn start` and stops on SIGTERM", async () => {
    const dataDir = await mkdtemp(path.join(tmpdir(), "browserfn-cli-"));
    const child = spawn(process.execPath, [CLI, "start"], {
      env: { ...process.env, PORT: "0", BROWSERFN_DATA_DIR: dataDir },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let output = "";
    child.stdout.on("data", (chunk) => (output += chunk));
    child.stderr.on("data", (chunk) => (output += chunk));
    try {
      for (let i = 0; i < 400 && !/serving http/.test(output); i++) await new Promise((resolve) => setTimeout(resolve, 50));
      const url = /serving (http:\/\/127\.0\.0\.1:\d+)/.exec(output)?.[1];
      expect(url).toBeDefined();
      expect((await fetch(`${url}/health`)).status).toBe(200);
      const exit = new Promise((resolve) => child.once("exit", resolve));
      child.kill("SIGTERM");
      expect(await exit).toBe(0);
    } finally {
      if (child.exitCode === null) child.kill("SIGKILL");
      await rm(dataDir, { recursive: true, force: true });
    }
  });
});
