import { execFile } from "node:child_process";
import { cp, mkdtemp, readFile, rm, symlink, utimes, writeFile } from "node:fs/promises";
import { existsSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { generateApiKey } from "../../lambdas/identity/apiKeys";
import { type ChildService, startChildService } from "../helpers/childService";
import { expectNoProcessesWith } from "../helpers/processes";

// What `npm ci && npm start` and the `browserfn` command run: the bundles in dist/, built by the
// package's `prepare` script (npm ci runs it after installing; .ci/run is `npm ci` then `npm test`).
// The test works on a copy of the project's sources (node_modules linked), so the project's own
// dist/, which the other tests' processes load, is left alone.

const ROOT = path.resolve(__dirname, "../..");
const run = promisify(execFile);
// eslint-disable-next-line @typescript-eslint/no-require-imports -- the launchers' own check
const { isDistFresh } = require("../../scripts/build/sourceStamp.cjs") as typeof import("../../scripts/build/sourceStamp.cjs");

/** What a start or a command reads, besides node_modules. */
const COPIED = ["bin", "lambdas", "layers", "client", "scripts", "package.json", "package-lock.json", "tsconfig.json"];
const BUNDLES = ["dist/local.cjs", "dist/cli.cjs", "dist/runner/worker.cjs", "dist/runner/playwright-core.cjs", "dist/runner/host.cjs"];

let copy: string;
let dataDir: string;
let service: ChildService | undefined;
const key = generateApiKey();

/** The copy's `browserfn`, run as an installed bin is (its shebang, no `node` in front). */
function browserfn(args: string[], env: NodeJS.ProcessEnv = {}): Promise<{ stdout: string; stderr: string }> {
  const home = path.join(copy, ".home");
  return run(path.join(copy, "bin", "cli.js"), args, {
    cwd: copy,
    env: { ...process.env, XDG_CONFIG_HOME: home, BROWSERFN_URL: service?.url ?? "http://127.0.0.1:1", BROWSERFN_API_KEY: key, ...env },
    timeout: 120_000,
  });
}

beforeAll(async () => {
  copy = await mkdtemp(path.join(tmpdir(), "browserfn-dist-"));
  dataDir = path.join(copy, ".data");
  for (const name of COPIED) await cp(path.join(ROOT, name), path.join(copy, name), { recursive: true, filter: (from) => !from.includes(`${path.sep}node_modules`) });
  await symlink(path.join(ROOT, "node_modules"), path.join(copy, "node_modules"));
}, 60_000);

afterAll(async () => {
  await service?.kill();
  await rm(copy, { recursive: true, force: true });
});

describe("dist/: the bundles npm ci builds and npm start runs", () => {
  it("are built by the prepare script that npm ci runs, and are fresh for the sources they were built from", async () => {
    const pkg = JSON.parse(await readFile(path.join(copy, "package.json"), "utf8")) as { scripts: Record<string, string> };
    expect(pkg.scripts.prepare).toBe("tsx scripts/build/buildDist.ts");
    expect(pkg.scripts.start).toBe("exec node bin/start.cjs");
    expect(await readFile(path.join(ROOT, ".ci", "run"), "utf8")).toMatch(/\nnpm ci\nnpm test\n/);
    expect(BUNDLES.filter((file) => existsSync(path.join(copy, file)))).toEqual([]);
    await run("npm", ["run", "--silent", "prepare"], { cwd: copy, timeout: 180_000 });
    expect(BUNDLES.filter((file) => !existsSync(path.join(copy, file)))).toEqual([]);
    expect(isDistFresh(copy)).toBe(true);
  }, 200_000);

  it("leave the compiler, the MCP SDK and ajv out of the service's start, as the sources do (startupModules.test)", async () => {
    // The bundle's top level runs, then main() stops at the malformed PORT before starting anything.
    const script = [
      'process.env.PORT = "not-a-port";',
      `require(${JSON.stringify(path.join(copy, "dist", "local.cjs"))});`,
      "process.stdout.write(JSON.stringify(Object.keys(require.cache)));",
      "process.exit(0);",
    ].join("\n");
    const { stdout } = await run(process.execPath, ["-e", script], { cwd: copy, timeout: 60_000 });
    const packageOf = (file: string) => /node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(file)?.[1];
    const loaded = [...new Set((JSON.parse(stdout) as string[]).map(packageOf))].filter((name): name is string => name !== undefined);
    expect(loaded.filter((name) => ["typescript", "@modelcontextprotocol/sdk", "ajv", "tsx"].includes(name))).toEqual([]);
    // What the bundle carries is not loaded from node_modules again.
    expect(loaded.filter((name) => name.startsWith("@aws-sdk/") || name === "zod")).toEqual([]);
  }, 60_000);

  it("start the service from the bundle, which serves the API and the dashboard and runs workers from the prebuilt runner bundles", async () => {
    service = await startChildService(dataDir, key, {}, undefined, copy);
    expect(service.output()).not.toContain("building it");
    expect((await fetch(`${service.url}/health`)).status).toBe(200);
    // The dashboard's files are found beside their source module, as under tsx.
    const page = await fetch(`${service.url}/`);
    expect(page.status).toBe(200);
    expect(await page.text()).toContain("<html");
    expect((await fetch(`${service.url}/dashboard/app.js`)).status).toBe(200);
    // The runtime folder holds copies of dist/runner's bundles (no build at start-up).
    const runtimeDir = readFileSync(path.join(dataDir, "runtime-dir"), "utf8").trim();
    for (const file of ["worker.cjs", "playwright-core.cjs", "host.cjs"]) {
      expect((await readFile(path.join(runtimeDir, file))).equals(await readFile(path.join(copy, "dist", "runner", file)))).toBe(true);
    }
    // A function deployed and invoked: the analysis thread, a worker process in its sandbox.
    const deploy = await browserfn(["deploy", path.join(ROOT, "test", "fixtures", "cli", "shout.ts"), "--name", "shout", "--json"]);
    expect((JSON.parse(deploy.stdout) as { variables: { name: string }[] }).variables.map((variable) => variable.name)).toEqual(["word", "times", "loud", "tags"]);
    const invoked = await browserfn(["invoke", "shout", "-p", "word=hi", "--json"]);
    expect(JSON.parse(invoked.stdout)).toMatchObject({ shouted: "HI HI", times: 2 });
  }, 120_000);

  it("answer `browserfn list --json` through the installed bin, from the bundle", async () => {
    const { stdout, stderr } = await browserfn(["list", "--json"]);
    expect(stderr).toBe("");
    expect((JSON.parse(stdout) as { items: { name: string }[] }).items.map((item) => item.name)).toEqual(["shout"]);
  }, 60_000);

  it("are built again when a source is newer, so an edit is never run old", async () => {
    const cli = path.join(copy, "bin", "cli.ts");
    await writeFile(cli, (await readFile(cli, "utf8")).replace("print the version", "print the version (edited)"));
    // An mtime in the future of the build's: a coarse file system clock cannot hide the edit.
    const later = new Date(Date.now() + 5_000);
    await utimes(cli, later, later);
    expect(isDistFresh(copy)).toBe(false);
    const help = await browserfn(["help"]);
    expect(help.stderr).toContain("building it");
    expect(help.stdout).toContain("print the version (edited)");
    expect(isDistFresh(copy)).toBe(true);
    // The next command runs the new bundle without building.
    const again = await browserfn(["help"]);
    expect(again.stderr).toBe("");
    expect(again.stdout).toContain("print the version (edited)");
  }, 200_000);

  it("stop on SIGTERM, leaving nothing running", async () => {
    expect(await service?.stop()).toBe(0);
    service = undefined;
    await expectNoProcessesWith(dataDir);
  }, 60_000);
});
