import type { Sandbox, SandboxSetting } from "./sandbox";
import { NAMESPACES_INSTALL } from "./sandbox";
import { type RuntimeFiles, startSandboxedHost } from "./sandboxedHost";
import { WORKER_UIDS } from "./workerUids";

/** The file systems' size of the sandbox started to confirm the mode (it runs nothing). */
const CONFIRM_MEMORY_MB = 128;

/**
 * Starts one real sandbox of the chosen kind, with its network, and stops it again: what
 * chooseSandbox cannot tell from the tools alone (a user without root may create namespaces
 * but not give them a network, where /dev/net/tun is root's only). Where it fails, `auto`
 * falls back to the process sandbox and says why; `namespaces` refuses to start.
 */
export async function confirmSandbox(sandbox: Sandbox, setting: SandboxSetting, files: RuntimeFiles): Promise<Sandbox> {
  if (sandbox.mode !== "namespaces") return sandbox;
  const uid = sandbox.uidPerWorker ? WORKER_UIDS.acquire() : undefined;
  try {
    const host = await startSandboxedHost(sandbox, files, uid, CONFIRM_MEMORY_MB);
    await host.kill();
    return sandbox;
  } catch (error) {
    const problem = `a sandbox could not start: ${(error as Error).message.split("\n")[0]}`;
    if (setting === "namespaces") {
      throw new Error(`BROWSERFN_SANDBOX=namespaces, but ${problem}; install what it needs (${NAMESPACES_INSTALL}) or set BROWSERFN_SANDBOX=auto`);
    }
    return { ...sandbox, mode: "process", fallbackReason: problem };
  } finally {
    if (uid !== undefined) WORKER_UIDS.release(uid);
  }
}
