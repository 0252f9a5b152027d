import { chooseSandbox, describeSandbox, NAMESPACES_INSTALL } from "../../lambdas/runtime/local/sandbox/sandbox";

// The search path of a machine without bubblewrap: only Node's own folder (the test runs under it).
const WITHOUT_TOOLS = "/nonexistent-browserfn-path";

describe("choosing the sandbox at start-up", () => {
  it("uses namespaces where bubblewrap, slirp4netns and iproute2 work (CI installs them: this fails, not skips, without them)", async () => {
    const sandbox = await chooseSandbox("auto", false);
    expect(sandbox.mode).toBe("namespaces");
    expect(describeSandbox(sandbox)).toMatch(/^Sandbox: namespaces \(bubblewrap: own user, PID, mount, IPC and network namespaces; no host loopback or private networks/);
  });

  it("falls back to process mode without them, and says so with the one command that enables namespaces", async () => {
    const sandbox = await chooseSandbox("auto", false, { searchPath: WITHOUT_TOOLS });
    expect(sandbox.mode).toBe("process");
    expect(sandbox.fallbackReason).toBe("bwrap, slirp4netns, nsenter, ip not found");
    const line = describeSandbox(sandbox);
    expect(line).toContain("Sandbox: process (bwrap, slirp4netns, nsenter, ip not found). WARNING: weaker isolation");
    expect(line).toContain(NAMESPACES_INSTALL);
    expect(NAMESPACES_INSTALL).toBe("sudo apt-get install bubblewrap slirp4netns iproute2");
  });

  it("needs only bubblewrap when the local network is allowed (the sandbox shares the host's network)", async () => {
    const bwrapOnly = (await chooseSandbox("auto", true)).tools.bwrap;
    const dir = bwrapOnly.slice(0, bwrapOnly.lastIndexOf("/"));
    expect((await chooseSandbox("auto", true, { searchPath: dir })).mode).toBe("namespaces");
  });

  it("refuses to start with BROWSERFN_SANDBOX=namespaces when it cannot have them", async () => {
    await expect(chooseSandbox("namespaces", false, { searchPath: WITHOUT_TOOLS })).rejects.toThrow(
      `BROWSERFN_SANDBOX=namespaces, but bwrap, slirp4netns, nsenter, ip not found; install what it needs (${NAMESPACES_INSTALL}) or set BROWSERFN_SANDBOX=auto`,
    );
  });

  it("uses process mode when told to, wherever namespaces would work", async () => {
    const sandbox = await chooseSandbox("process", false);
    expect(sandbox.mode).toBe("process");
    expect(describeSandbox(sandbox)).toContain("Sandbox: process (as set)");
  });
});
