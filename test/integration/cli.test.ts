import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
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
});
