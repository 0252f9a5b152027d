import { realpath } from "node:fs/promises";
import path from "node:path";
import type { Sandbox } from "./sandbox";
import type { RuntimeFiles } from "./sandboxedHost";
import { playwrightBundleOf } from "../../../runner/buildWorkerBundle";

/** Read-only system paths a sandbox needs (node, Chromium's libraries, certificates, fonts). */
const SYSTEM_PATHS = ["/usr", "/lib", "/lib64", "/lib32", "/bin", "/sbin"];
const ETC_PATHS = [
  "/etc/ssl",
  "/etc/ca-certificates",
  "/etc/fonts",
  "/etc/ld.so.cache",
  "/etc/ld.so.conf",
  "/etc/ld.so.conf.d",
  "/etc/localtime",
  "/etc/nsswitch.conf",
  "/etc/alternatives",
  "/etc/mime.types",
];

/**
 * bubblewrap's arguments: what the sandbox sees, and the host as its command. Its private file
 * systems (sandboxMounts) hold `tmpfsBytes` each.
 */
export async function bwrapArgs(sandbox: Sandbox, files: RuntimeFiles, tmpfsBytes: number): Promise<string[]> {
  const ro = (source: string, target = source) => ["--ro-bind-try", source, target];
  const node = await realpath(process.execPath);
  const nodeDir = path.dirname(node);
  const underSystem = SYSTEM_PATHS.some((dir) => nodeDir === dir || nodeDir.startsWith(`${dir}/`));
  return [
    "--unshare-all",
    "--unshare-user",
    ...(sandbox.allowLocalNetwork ? ["--share-net"] : []),
    "--die-with-parent",
    "--disable-userns",
    "--uid", "1000",
    "--gid", "1000",
    "--hostname", "browserfn",
    ...SYSTEM_PATHS.flatMap((dir) => ro(dir)),
    ...(underSystem ? [] : ro(nodeDir)),
    ...ETC_PATHS.flatMap((file) => ro(file)),
    ...ro(path.join(files.etcDir, "resolv.conf"), "/etc/resolv.conf"),
    ...ro(path.join(files.etcDir, "hosts"), "/etc/hosts"),
    ...ro(path.join(files.etcDir, "passwd"), "/etc/passwd"),
    ...ro(path.join(files.etcDir, "group"), "/etc/group"),
    "--proc", "/proc",
    "--dev", "/dev",
    "--size", String(tmpfsBytes), "--tmpfs", "/dev/shm",
    "--size", String(tmpfsBytes), "--tmpfs", "/tmp",
    "--size", String(tmpfsBytes), "--tmpfs", files.runtimeDir,
    ...ro(files.hostBundle),
    ...ro(files.workerBundle),
    ...ro(playwrightBundleOf(files.workerBundle)),
    // Chromium at the path the service unpacked it to, over the private /tmp if it is there.
    ...ro(files.chromium.executable),
    ...files.chromium.files.flatMap((file) => ro(file)),
    "--clearenv",
    "--setenv", "PATH", "/usr/bin:/bin",
    "--setenv", "HOME", "/tmp",
    "--chdir", "/tmp",
    "--info-fd", "4",
    "--block-fd", "5",
    "--",
    node,
    files.hostBundle,
  ];
}
