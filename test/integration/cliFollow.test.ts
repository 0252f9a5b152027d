import { spawn } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { CLI, FIXTURES, cliEnv, runCli } from "../fixtures/cli/runCli";
import { type TestService, startTestService } from "../helpers/localService";

describe("browserfn invoke --follow, against a real local service", () => {
  let svc: TestService;
  let home: string;
  let env: NodeJS.ProcessEnv;
  const cli = (...args: string[]) => runCli(args, env);

  beforeAll(async () => {
    svc = await startTestService();
    home = await mkdtemp(path.join(tmpdir(), "browserfn-cli-follow-"));
    env = cliEnv(home, { BROWSERFN_URL: svc.url, BROWSERFN_API_KEY: svc.adminKey });
    expect((await cli("deploy", path.join(FIXTURES, "slowLog.ts"), "--name", "slow-log")).code).toBe(0);
    expect((await cli("deploy", path.join(FIXTURES, "fails.ts"))).code).toBe(0);
  });
  afterAll(async () => {
    await svc?.destroy();
    if (home) await rm(home, { recursive: true, force: true });
  });

  it("prints the run's console output as it is written (stderr), then its result (stdout)", async () => {
    // -p values go in the query string: waitMs is converted to a number by the service.
    const child = spawn(process.execPath, [CLI, "invoke", "slow-log", "--follow", "-p", "waitMs=2000"], { env, stdio: ["ignore", "pipe", "pipe"] });
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
    expect(JSON.parse(stdout)).toEqual({ waited: 2000 });
    expect(stderr).toMatch(/^Running slow-log \(run run_[0-9a-z]{26}\)…\n/);
    // Each line once, in order, the first one well before the run ended.
    expect(stderr.split("before the wait")).toHaveLength(2);
    expect(stderr.split("after the wait")).toHaveLength(2);
    expect(stderr.indexOf("before the wait")).toBeLessThan(stderr.indexOf("after the wait"));
    expect(stderr).toMatch(/after the wait\nrun run_[0-9a-z]{26} · succeeded · /);
    expect(endedAt - firstLineAt).toBeGreaterThan(1500);
    // The run is the one the service recorded, with that log.
    const runId = /run (run_[0-9a-z]{26})/.exec(stderr)?.[1] ?? "";
    const run = await svc.call("GET", `/runs/${runId}`);
    expect(run.body).toMatchObject({ status: "succeeded", params: { waitMs: 2000 }, result: { waited: 2000 } });
    expect(stderr).toContain(run.body.logs);
  });

  it("exits 1 with the run's error when it fails; --json keeps stdout for JSON", async () => {
    const failed = await cli("invoke", "fails", "--follow", "--data", '{"reason": "while followed"}', "--json");
    expect(failed.code).toBe(1);
    expect(failed.stdout).toBe("");
    const body = JSON.parse(failed.stderr.trim().split("\n").pop() ?? "");
    expect(body.error).toMatchObject({ code: "function_error", message: "failed while followed", details: { run_id: expect.stringMatching(/^run_/), status: "failed" } });
    const unknown = await cli("invoke", "nope", "--follow");
    expect(unknown.code).toBe(3);
    expect(unknown.stderr).toContain("function_not_found");
    expect((await cli("invoke", "fails", "--follow", "--async")).code).toBe(2);
  });
});
