import { spawn } from "node:child_process";
import { mkdtemp, rm, stat, readFile, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { type TestService, startTestService } from "../helpers/localService";
import { CLI, FIXTURES, cliEnv, runCli } from "../fixtures/cli/runCli";

describe("browserfn CLI commands against a real local service", () => {
  let svc: TestService;
  let configHome: string;
  let env: NodeJS.ProcessEnv;
  const cli = (...args: string[]) => runCli(args, env);

  beforeAll(async () => {
    // A 1 s sync window: a longer run answers 202, and `invoke` polls it.
    svc = await startTestService({ config: { syncWaitSeconds: 1 } });
    configHome = await mkdtemp(path.join(tmpdir(), "browserfn-cli-config-"));
    env = cliEnv(configHome, { BROWSERFN_URL: svc.url, BROWSERFN_API_KEY: svc.adminKey });
  });
  afterAll(async () => {
    await svc?.destroy();
    if (configHome) await rm(configHome, { recursive: true, force: true });
  });

  it("deploys a file with a local import, keeping the parameters' declared types, and updates it", async () => {
    const first = await cli("deploy", path.join(FIXTURES, "shout.ts"), "--name", "shout", "--description", "shouts", "--timeout", "60", "--json");
    expect(first.stderr).toContain("Bundled");
    expect(first.stderr).toContain("./helpers/shout");
    expect(first.code).toBe(0);
    const record = JSON.parse(first.stdout);
    expect(record).toMatchObject({ name: "shout", latest_version: "1", description: "shouts", timeout_seconds: 60, status: "active" });
    expect(record.variables).toEqual([
      { name: "word", type: "string", required: true },
      { name: "times", type: "number", required: false, default: "2" },
      { name: "loud", type: "boolean", required: false },
      { name: "tags", type: "string[]", required: false, default: "[]" },
    ]);
    // The deployed source is esbuild's minified bundle (the npm package and the helper inside, the runtime
    // imported) ending in a default export that declares the parameters as the file does.
    const source = (await svc.call("GET", "/functions/shout/versions/1")).body.code as string;
    expect(source).toMatch(/^import\{Session as [\w$]+\}from"browserfn\/runtime";\n/);
    expect(source).toContain("export default async function run(word: string, times: number = 2, loud?: boolean, tags: string[] = []) {");
    expect(source).not.toContain("./helpers/shout");

    const again = await cli("deploy", path.join(FIXTURES, "shout.ts"), "--name", "shout", "--memory", "512", "--shared");
    expect(again.code).toBe(0);
    expect(again.stderr).toContain("shout exists; updating it");
    expect(again.stdout).toMatch(/memory:\s+512 MB/);
    expect(again.stdout).toMatch(/shared:\s+true/);
    expect(again.stdout).toMatch(/tags\s+string\[\]\s+no\s+\[\]/);
    // Same code again: no new version, the description kept.
    const info = JSON.parse((await cli("info", "shout", "--json")).stdout);
    expect(info).toMatchObject({ latest_version: "1", memory_mb: 512, shared: true, description: "shouts" });
  });

  it("notes the code's warnings on stderr at deploy, keeps them in --json, and `info` shows them", async () => {
    const dir = await mkdtemp(path.join(tmpdir(), "browserfn-cli-trap-"));
    try {
      const file = path.join(dir, "trap.ts");
      const trap = ["import { Session } from \"browserfn/runtime\";", "export default async function run() {", "  await using session = await Session.start();", "  const page = await session.newPage();", "  return page.title();", "}", ""];
      await writeFile(file, trap.join("\n"));
      const message = "line 5: `return page.title()` returns a promise while `await using session` closes the session at the return: write `return await page.title()`";
      const deployed = await cli("deploy", file);
      expect(deployed.code).toBe(0);
      expect(deployed.stderr).toContain(`warning (unawaited_return_in_session): ${message}\n`);
      expect(deployed.stdout).not.toContain("warning");
      const asJson = await cli("deploy", file, "--description", "again", "--json");
      expect(asJson.stderr).toContain(`warning (unawaited_return_in_session): ${message}\n`);
      expect(JSON.parse(asJson.stdout).warnings).toEqual([{ code: "unawaited_return_in_session", message, line: 5 }]);
      const info = await cli("info", "trap");
      expect(info.stdout).toContain(`\nwarnings (version 1):\n  warning (unawaited_return_in_session): ${message}\n`);
      await writeFile(file, trap.join("\n").replace("return page.title()", "return await page.title()"));
      const fixed = await cli("deploy", file);
      expect(fixed.stderr).not.toContain("warning");
      expect((await cli("info", "trap")).stdout).not.toContain("warning");
      expect((await svc.call("DELETE", "/functions/trap")).status).toBe(204);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it("invokes with -p (converted to the declared types) and --data; a failing function exits 1", async () => {
    const withParams = await cli("invoke", "shout", "-p", "word=hey", "-p", "times=3", "-p", "loud=true", "-p", 'tags=["a","b"]', "--json");
    expect(withParams.code).toBe(0);
    expect(JSON.parse(withParams.stdout)).toEqual({ shouted: "HEY HEY HEY", times: 3, loud: true, tags: ["a", "b"], id_length: 26, session: "function" });
    const withData = await cli("invoke", "shout", "--data", '{"word": "yo"}');
    expect(withData.code).toBe(0);
    expect(JSON.parse(withData.stdout)).toMatchObject({ shouted: "YO YO", times: 2 });
    expect(withData.stderr).toMatch(/run run_\w+ · version 1/);

    const badParams = await cli("invoke", "shout", "-p", "word=x", "-p", "times=many");
    expect(badParams.code).toBe(3);
    expect(badParams.stderr).toContain("invalid_parameters");

    expect((await cli("deploy", path.join(FIXTURES, "fails.ts"))).code).toBe(0); // name from the file: "fails"
    const failed = await cli("invoke", "fails", "-p", "reason=today");
    expect(failed.code).toBe(1);
    expect(failed.stderr).toContain("failed today");
    expect(failed.stderr).toContain("function_error");
    expect(failed.stderr).toMatch(/run run_\w+/);
  });

  it("waits through a 202 until the run ends, starts runs with --async, and bounds the wait with --wait", async () => {
    const sleeper = `export default async function run(ms: number) {\n  await new Promise((resolve) => setTimeout(resolve, ms));\n  return { slept: ms };\n}\n`;
    await svc.deploy("sleeper", sleeper);
    const waited = await cli("invoke", "sleeper", "-p", "ms=2500", "--json");
    expect(waited.code).toBe(0);
    expect(JSON.parse(waited.stdout)).toEqual({ slept: 2500 });
    const started = await cli("invoke", "sleeper", "--data", '{"ms": 3000}', "--async", "--json");
    expect(started.code).toBe(0);
    const accepted = JSON.parse(started.stdout);
    expect(accepted).toMatchObject({ run_id: expect.stringMatching(/^run_/), status_url: `${svc.url}/runs/${accepted.run_id}` });
    const gaveUp = await cli("invoke", "sleeper", "-p", "ms=4000", "--wait", "1");
    expect(gaveUp.code).toBe(3);
    expect(gaveUp.stderr).toContain("wait_timeout");
    await cli("delete", "sleeper", "--yes");
  });

  it("lists, shows info, logs, metrics and versions, in tables and as --json", async () => {
    const list = await cli("list");
    expect(list.code).toBe(0);
    expect(list.stdout.split("\n")[0]).toMatch(/^NAME\s+VERSION\s+STATUS/);
    expect(list.stdout).toMatch(/\nfails\s+1\s+active/);
    expect(JSON.parse((await cli("list", "--json")).stdout).items.map((f: { name: string }) => f.name)).toEqual(["fails", "shout"]);

    const info = await cli("info", "shout");
    expect(info.stdout).toMatch(/name:\s+shout/);
    expect(info.stdout).toMatch(/word\s+string\s+yes/);

    const logs = await cli("logs", "shout", "--limit", "1");
    expect(logs.code).toBe(0);
    expect(logs.stdout.split("\n").filter(Boolean)).toHaveLength(2); // header + one run
    expect(logs.stdout).toMatch(/succeeded\s+\d+ ms\s+run_\w+\s+1\s+http/);
    const logsJson = JSON.parse((await cli("logs", "fails", "--json")).stdout);
    expect(logsJson.items[0]).toMatchObject({ status: "failed", error: { code: "function_error" } });

    const metrics = JSON.parse((await cli("metrics", "shout", "--json")).stdout);
    expect(metrics).toMatchObject({ total_calls: 2, succeeded_calls: 2, success_rate: 100 });
    expect((await cli("metrics", "fails")).stdout).toMatch(/success rate:\s+0%/);

    const versions = await cli("versions", "shout");
    expect(versions.stdout).toMatch(/^VERSION\s+CREATED\s+SHA256\s+PARAMETERS/);
    expect(versions.stdout).toContain("word: string, times: number, loud: boolean, tags: string[]");
    expect(JSON.parse((await cli("versions", "shout", "--json")).stdout).items).toHaveLength(1);
  });

  it("forks a shared function from a second account", async () => {
    const otherKey = await svc.newAccount("second");
    const functionId = (await svc.call("GET", "/functions/shout/info")).body.function_id as string;
    const other = cliEnv(configHome, { BROWSERFN_URL: svc.url, BROWSERFN_API_KEY: otherKey });
    const forked = await runCli(["fork", functionId, "--json"], other);
    expect(forked.code).toBe(0);
    expect(JSON.parse(forked.stdout)).toMatchObject({ name: "shout", reference_workflow_id: functionId, shared: false });
    const invoked = await runCli(["invoke", "shout", "-p", "word=mine", "--json"], other);
    expect(JSON.parse(invoked.stdout)).toMatchObject({ shouted: "MINE MINE" });
    const notShared = await runCli(["fork", (await svc.call("GET", "/functions/fails/info")).body.function_id], other);
    expect(notShared.code).toBe(3);
    expect(notShared.stderr).toContain("function_not_found");
  });

  it("follows logs until interrupted, printing each run once and none from before its window", async () => {
    await svc.call("POST", "/functions/shout", { body: { word: "before" } });
    const before = ((await svc.call("GET", "/functions/shout/logs")).body.items as { run_id: string }[]).map((entry) => entry.run_id);
    expect(before.length).toBeGreaterThanOrEqual(3); // newest first: only before[0] is in the window of --limit 1
    const child = spawn(process.execPath, [CLI, "logs", "shout", "--follow", "--limit", "1"], { env, stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    child.stdout.on("data", (chunk) => (stdout += chunk));
    const exited = new Promise<number | null>((resolve) => child.once("close", resolve));
    try {
      const waitFor = async (test: () => boolean) => {
        for (let i = 0; i < 200 && !test(); i++) await new Promise((resolve) => setTimeout(resolve, 50));
        expect(test()).toBe(true);
      };
      await waitFor(() => stdout.includes("TIME"));
      const invoked = await svc.call("POST", "/functions/shout", { body: { word: "follow" } });
      const runId = invoked.headers.get("x-run-id") ?? "";
      await waitFor(() => stdout.includes(runId));
      // Two more looks (every 2 s): nothing is printed again.
      await new Promise((resolve) => setTimeout(resolve, 4500));
      child.kill("SIGINT");
      expect(await exited).toBe(0);
      const times = (id: string) => stdout.split(id).length - 1;
      expect(before.map(times)).toEqual(before.map((_, i) => (i === 0 ? 1 : 0)));
      expect(times(runId)).toBe(1);
    } finally {
      if (child.exitCode === null) child.kill("SIGKILL");
    }
  });

  it("manages API keys and shows usage", async () => {
    const created = await cli("keys", "create", "--name", "ci");
    expect(created.code).toBe(0);
    const secret = created.stdout.trim();
    expect(secret).toMatch(/^bfn_/);
    const keys = JSON.parse((await cli("keys", "--json")).stdout).items as { key_id: string; name: string | null }[];
    const ci = keys.find((k) => k.name === "ci");
    expect(ci).toBeDefined();
    expect((await cli("keys")).stdout).toMatch(/^KEY_ID\s+PREFIX\s+NAME/);
    const revoked = await cli("keys", "revoke", ci?.key_id ?? "");
    expect(revoked.code).toBe(0);
    const withRevoked = await runCli(["list"], cliEnv(configHome, { BROWSERFN_URL: svc.url, BROWSERFN_API_KEY: secret }));
    expect(withRevoked.code).toBe(3);
    expect(withRevoked.stderr).toContain("invalid_token");

    const usage = JSON.parse((await cli("usage", "--json")).stdout);
    expect(usage).toMatchObject({ account: "local", plan: "pro" });
    expect(usage.total.invocations).toBeGreaterThanOrEqual(4);
    expect((await cli("usage")).stdout).toMatch(/plan:\s+pro/);
  });

  it("deletes with --yes, and refuses without it when stdin is not a terminal", async () => {
    const refused = await cli("delete", "fails");
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain("refusing to delete without --yes");
    expect((await svc.call("GET", "/functions/fails/info")).status).toBe(200);
    const deleted = await cli("delete", "fails", "--yes");
    expect(deleted.code).toBe(0);
    expect((await svc.call("GET", "/functions/fails/info")).status).toBe(404);
  });

  it("asks before deleting, and shows a spinner, on a terminal", async () => {
    await svc.deploy("keep-me", "export default async () => 1;\n");
    // `script` gives the command a pseudo-terminal as stdin, stdout and stderr; the answer is typed into it.
    const onTerminal = (command: string, answer: string) =>
      new Promise<{ code: number | null; output: string }>((resolve, reject) => {
        const child = spawn("script", ["-qefc", `${JSON.stringify(process.execPath)} ${JSON.stringify(CLI)} ${command}`, "/dev/null"], {
          env,
          stdio: ["pipe", "pipe", "pipe"],
        });
        let output = "";
        child.stdout.on("data", (chunk) => {
          output += chunk;
          if (answer && output.includes("[y/N]")) {
            child.stdin.write(answer);
            answer = "";
          }
        });
        child.once("error", reject);
        child.once("close", (code) => resolve({ code, output }));
      });
    const declined = await onTerminal("delete keep-me", "n\r");
    expect(declined.output).toContain("Delete function 'keep-me' with all its versions and runs? [y/N]");
    expect(declined.output).toContain("Not deleted.");
    expect(declined.code).toBe(0);
    expect((await svc.call("GET", "/functions/keep-me/info")).status).toBe(200);
    const invoked = await onTerminal("invoke keep-me", "");
    expect(invoked.output).toContain("Running keep-me");
    expect(invoked.code).toBe(0);
    const confirmed = await onTerminal("delete keep-me", "y\r");
    expect(confirmed.output).toContain("Deleted keep-me");
    expect(confirmed.code).toBe(0);
    expect((await svc.call("GET", "/functions/keep-me/info")).status).toBe(404);
  });

  it("exits 3 with the API's code and message, as JSON with --json", async () => {
    const missing = await cli("info", "nope");
    expect(missing.code).toBe(3);
    expect(missing.stderr).toContain("No function named 'nope' [function_not_found, HTTP 404]");
    const asJson = await cli("metrics", "nope", "--json");
    expect(asJson.code).toBe(3);
    expect(JSON.parse(asJson.stderr).error).toMatchObject({ code: "function_not_found", details: { ref: "nope" } });
    expect(asJson.stdout).toBe("");
  });

  it("logs in: checks the key, stores URL and key with mode 0600, and uses them", async () => {
    const home = await mkdtemp(path.join(tmpdir(), "browserfn-cli-login-"));
    try {
      const bare = cliEnv(home);
      const notLoggedIn = await runCli(["list"], bare);
      expect(notLoggedIn.code).toBe(2);
      expect(notLoggedIn.stderr).toContain("Not logged in");
      const badKey = await runCli(["login", "--url", svc.url, "--key", "bfn_wrong_wrong_wrong_wrong"], bare);
      expect(badKey.code).toBe(3);
      expect(badKey.stderr).toContain("invalid_token");
      await expect(stat(path.join(home, "browserfn", "config.json"))).rejects.toMatchObject({ code: "ENOENT" });

      const login = await runCli(["login", "--url", `${svc.url}/`, "--key", svc.adminKey], bare);
      expect(login.code).toBe(0);
      expect(login.stderr).toContain("as account local");
      const file = path.join(home, "browserfn", "config.json");
      expect((await stat(file)).mode & 0o777).toBe(0o600);
      expect(JSON.parse(await readFile(file, "utf8"))).toEqual({ url: svc.url, api_key: svc.adminKey });
      const list = await runCli(["list", "--json"], bare);
      expect(list.code).toBe(0);
      expect(JSON.parse(list.stdout).items.map((f: { name: string }) => f.name)).toContain("shout");
      // The environment overrides the stored key.
      const overridden = await runCli(["list"], cliEnv(home, { BROWSERFN_API_KEY: "bfn_override_override_override" }));
      expect(overridden.code).toBe(3);
    } finally {
      await rm(home, { recursive: true, force: true });
    }
  });
});
