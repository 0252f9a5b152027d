import { spawn, spawnSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { readFileSync } from "node:fs";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { FIXTURES, cliEnv, runCli } from "../fixtures/cli/runCli";

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

  it("exits 2 on usage errors, with the command's usage", async () => {
    const home = await mkdtemp(path.join(tmpdir(), "browserfn-cli-usage-"));
    try {
      const env = cliEnv(home, { BROWSERFN_URL: "http://127.0.0.1:1", BROWSERFN_API_KEY: "bfn_unused_unused_unused" });
      const cases: [string[], string][] = [
        [["list", "--bogus"], "Unknown option '--bogus'"],
        [["info"], "missing argument <name>"],
        [["info", "a", "b"], "unexpected argument 'b'"],
        [["logs", "x", "--limit", "0"], "--limit must be a whole number from 1 to 1000"],
        [["invoke", "x", "-p", "novalue"], "-p takes key=value"],
        [["invoke", "x", "-p", "a=1", "--data", "{}"], "either -p key=value or --data JSON"],
        [["invoke", "x", "--data", "[1]"], "--data must be a JSON object"],
        [["deploy", path.join(FIXTURES, "shout.ts"), "--name", "Bad_Name"], "not a function name"],
        [["keys", "rotate"], "unknown keys action 'rotate'"],
        [["runs"], "missing action: runs get <run_id>, runs list, runs cancel <run_id> or runs replay <run_id>"],
        [["runs", "show", "x"], "unknown runs action 'show' (get, list, cancel, replay)"],
        [["runs", "get"], "missing argument <run_id>"],
        [["runs", "get", "run_x", "--limit", "3"], "--limit is for `runs list`"],
        [["runs", "list", "x", "--artifacts", "out"], "--artifacts is for `runs get`"],
        [["runs", "list", "x", "--limit", "0"], "--limit must be a whole number from 1 to 100"],
        [["login", "--url", "ftp://x", "--key", "k"], "must be an http(s) URL"],
      ];
      const results = await Promise.all(cases.map(([args]) => runCli(args, env)));
      cases.forEach(([args, message], i) => {
        const result = results[i];
        expect({ args, code: result?.code }).toEqual({ args, code: 2 });
        expect(result?.stderr).toContain(message);
        expect(result?.stderr).toContain("Usage: browserfn");
      });
      const help = await runCli(["help", "deploy"], env);
      expect(help.code).toBe(0);
      expect(help.stdout).toContain("Usage: browserfn deploy <file.ts>");
      expect((await runCli(["help"], env)).stdout).toMatch(/dev\s+run an automation file once locally/);
    } finally {
      await rm(home, { recursive: true, force: true });
    }
  });

  it("refuses to deploy code over the 256 KB limit, or imports it cannot bundle, before calling the API", async () => {
    const dir = await mkdtemp(path.join(tmpdir(), "browserfn-cli-bundle-"));
    try {
      // The service is unreachable: these fail before any request.
      const env = cliEnv(dir, { BROWSERFN_URL: "http://127.0.0.1:1", BROWSERFN_API_KEY: "bfn_unused_unused_unused" });
      await writeFile(path.join(dir, "blob.ts"), `export const blob = ${JSON.stringify(randomBytes(200 * 1024).toString("base64"))};\n`);
      await writeFile(path.join(dir, "big.ts"), `import { blob } from "./blob";\nexport default async function run(n: number = 1) { return blob.length * n; }\n`);
      const big = await runCli(["deploy", path.join(dir, "big.ts")], env);
      expect(big.code).toBe(2);
      expect(big.stderr).toMatch(
        /The bundled code is 26\d\.\d KB \(\d+ bytes\), over the service's limit of 256\.0 KB \(262144 bytes\): the service stores the code of every version and compiles it as one module, so it caps its size\. big\.ts is 0\.\d KB, its bundled imports 26\d\.\d KB \(\.\/blob\.ts 26\d\.\d KB\)/,
      );

      // The whole of zod, as one object: what it weighs, and which package it is.
      const whole = await runCli(["deploy", path.join(FIXTURES, "zodWhole.ts"), "--name", "zod-whole"], env);
      expect(whole.code).toBe(2);
      expect(whole.stderr).toMatch(/The bundled code is 4\d\d\.\d KB \(\d+ bytes\), over the service's limit of 256\.0 KB .* zodWhole\.ts is 0\.\d KB, its bundled imports 4\d\d\.\d KB \(zod 4\d\d\.\d KB\)/);

      await writeFile(path.join(dir, "missing.ts"), `import { nothing } from "./nowhere";\nexport default async function run() { return nothing; }\n`);
      const missing = await runCli(["deploy", path.join(dir, "missing.ts")], env);
      expect(missing.code).toBe(2);
      expect(missing.stderr).toContain('missing.ts:1:25: Could not resolve "./nowhere"');

      await writeFile(path.join(dir, "no-package.ts"), `import pad from "left-pad-not-installed";\nexport default async function run(s: string) { return pad(s, 3); }\n`);
      const noPackage = await runCli(["deploy", path.join(dir, "no-package.ts")], env);
      expect(noPackage.code).toBe(2);
      expect(noPackage.stderr).toBe(
        "Bundling no-package.ts…\nbrowserfn: Cannot find package 'left-pad-not-installed' imported by no-package.ts: run npm install left-pad-not-installed\n",
      );

      // An entry the service would refuse is reported as the API reports it, before any request.
      await writeFile(path.join(dir, "no-default.ts"), `import { blob } from "./blob";\nexport const size = blob.length;\n`);
      const noDefault = await runCli(["deploy", path.join(dir, "no-default.ts")], env);
      expect(noDefault.code).toBe(3);
      expect(noDefault.stderr).toContain("The module has no default export; export an async function as default [invalid_code, HTTP 400]");
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
