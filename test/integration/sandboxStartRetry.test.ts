/**
 * A sandbox that fails as it starts (the kernel's namespace setup can fail for a moment under
 * heavy churn: bubblewrap's loopback "Failed RTM_NEWADDR", a sandbox gone before its routes were
 * set) is tried once more before the worker's start fails (localRuntime's hostStarter); a
 * failure before the sandbox exists (a missing tool, a refused setting) is not. Here bubblewrap is
 * the real one behind a wrapper that breaks the first N of its sandboxes in their setting up.
 */
import { chmod, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { hostStarter } from "../../lambdas/runtime/local/localRuntime";
import { prepareRuntimeFiles } from "../../lambdas/runtime/local/sandbox/runtimeFiles";
import { chooseSandbox, type Sandbox } from "../../lambdas/runtime/local/sandbox/sandbox";
import type { RuntimeFiles } from "../../lambdas/runtime/local/sandbox/sandboxedHost";
import { expectNoProcessesWith } from "../helpers/processes";

jest.setTimeout(60_000);

let dir: string;
let tools: string;
let files: RuntimeFiles;
let sandbox: Sandbox;
beforeAll(async () => {
  dir = await mkdtemp(path.join(tmpdir(), "browserfn-start-retry-"));
  // Workers (and so bubblewrap) run under uids of their own when the service is root: the wrapper and its count are theirs to use too.
  tools = await mkdtemp(path.join(tmpdir(), "browserfn-start-retry-tools-"));
  await chmod(tools, 0o755);
  [files, sandbox] = await Promise.all([prepareRuntimeFiles(dir, false), chooseSandbox("namespaces", false)]);
});
afterAll(async () => {
  await expectNoProcessesWith(dir);
  await rm(dir, { recursive: true, force: true });
  await rm(tools, { recursive: true, force: true });
});

/**
 * A bubblewrap whose first `broken` sandboxes fail: `"started"` as they start (the sandbox's
 * first process killed as soon as bubblewrap says it, as a namespace that fails under churn ends
 * it), `"before"` before bubblewrap runs at all. Each call is counted in a file.
 */
async function flakyBwrap(name: string, broken: number, how: "started" | "before"): Promise<{ sandbox: Sandbox; calls: () => Promise<number> }> {
  const count = path.join(tools, `${name}.calls`);
  await writeFile(count, "");
  await chmod(count, 0o666);
  const wrapper = path.join(tools, name);
  await writeFile(
    wrapper,
    `#!${process.execPath}
const { appendFileSync, createWriteStream, readFileSync } = require("node:fs");
const { spawn } = require("node:child_process");
appendFileSync(${JSON.stringify(count)}, "x");
const broken = readFileSync(${JSON.stringify(count)}, "utf8").length <= ${broken};
if (broken && ${JSON.stringify(how)} === "before") {
  process.stderr.write("bwrap: refused\\n");
  process.exit(1);
}
// bubblewrap's word of the sandbox's pid passes through this process: a broken sandbox is ended
// as soon as it exists, while the service sets it up (its network, its CPU group).
const child = spawn(${JSON.stringify(sandbox.tools.bwrap)}, process.argv.slice(2), { stdio: [0, 1, 2, 3, "pipe", 5] });
let info = "";
const infoOut = createWriteStream(null, { fd: 4 });
child.stdio[4].on("data", (chunk) => {
  info += chunk;
  const pid = Number(/"child-pid"\\s*:\\s*(\\d+)/.exec(info)?.[1]);
  if (broken && pid) {
    try { process.kill(pid, "SIGKILL"); } catch {}
  }
  infoOut.write(chunk);
});
child.on("exit", (code, signal) => process.exit(code ?? (signal ? 1 : 0)));
`,
  );
  await chmod(wrapper, 0o755);
  return { sandbox: { ...sandbox, tools: { ...sandbox.tools, bwrap: wrapper } }, calls: async () => (await readFile(count, "utf8")).length };
}

describe("a sandbox that fails as it starts", () => {
  it("is tried once more: the second sandbox is the worker's", async () => {
    const flaky = await flakyBwrap("once", 1, "started");
    const { host, release } = await hostStarter(flaky.sandbox, files, 256)();
    try {
      expect(await flaky.calls()).toBe(2);
      expect(host.alive()).toBe(true);
    } finally {
      await host.kill();
      release();
    }
    await expectNoProcessesWith(dir);
  });

  it("fails the worker's start when the second try fails too, and tries no third", async () => {
    const flaky = await flakyBwrap("twice", 2, "started");
    await expect(hostStarter(flaky.sandbox, files, 256)()).rejects.toThrow(/the sandbox ended as it started|bubblewrap exited \(\d+\) as the sandbox started/);
    expect(await flaky.calls()).toBe(2);
    await expectNoProcessesWith(dir);
  });

  it("is not tried again when bubblewrap fails before a sandbox exists", async () => {
    const flaky = await flakyBwrap("before", 1, "before");
    await expect(hostStarter(flaky.sandbox, files, 256)()).rejects.toThrow(/bubblewrap exited \(1\) before the sandbox started: bwrap: refused/);
    expect(await flaky.calls()).toBe(1);
    await expectNoProcessesWith(dir);
  });
});
