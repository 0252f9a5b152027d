import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { confirmSandbox } from "../../lambdas/runtime/local/sandbox/confirmSandbox";
import { prepareRuntimeFiles } from "../../lambdas/runtime/local/sandbox/runtimeFiles";
import { chooseSandbox, describeSandbox } from "../../lambdas/runtime/local/sandbox/sandbox";
import type { RuntimeFiles } from "../../lambdas/runtime/local/sandbox/sandboxedHost";
import { expectNoProcessesWith } from "../helpers/processes";

let dir: string;
let files: RuntimeFiles;
beforeAll(async () => {
  dir = await mkdtemp(path.join(tmpdir(), "browserfn-confirm-"));
  files = await prepareRuntimeFiles(dir, false);
});
afterAll(async () => {
  await expectNoProcessesWith(dir);
  await rm(dir, { recursive: true, force: true });
});

describe("confirming the sandbox with a real one at start-up", () => {
  it("keeps namespaces when a sandbox with its network starts, and leaves nothing running", async () => {
    const sandbox = await chooseSandbox("auto", false);
    expect(await confirmSandbox(sandbox, "auto", files)).toBe(sandbox);
    await expectNoProcessesWith(dir);
  });

  it("falls back to process when the network cannot be made (auto), and says why", async () => {
    const chosen = await chooseSandbox("auto", false);
    const broken = { ...chosen, tools: { ...chosen.tools, slirp4netns: "/bin/false" } };
    const sandbox = await confirmSandbox(broken, "auto", files);
    expect(sandbox.mode).toBe("process");
    expect(sandbox.fallbackReason).toMatch(/^a sandbox could not start: slirp4netns exited \(1\)/);
    expect(describeSandbox(sandbox)).toMatch(/^Sandbox: process \(a sandbox could not start: .*WARNING: weaker isolation/);
    await expectNoProcessesWith(dir);
  });

  it("refuses to start with BROWSERFN_SANDBOX=namespaces when a sandbox cannot start", async () => {
    const chosen = await chooseSandbox("namespaces", false);
    const broken = { ...chosen, tools: { ...chosen.tools, slirp4netns: "/bin/false" } };
    await expect(confirmSandbox(broken, "namespaces", files)).rejects.toThrow(/^BROWSERFN_SANDBOX=namespaces, but a sandbox could not start: slirp4netns exited/);
  });
});
